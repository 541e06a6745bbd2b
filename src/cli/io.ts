import { createInterface } from 'node:readline/promises';
// What a command may touch of the process: its streams, environment and cwd.
// Commands get this instead of reaching for `process`, so tests run the CLI
// in-process with captured output.

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly isTty: boolean;
  /** Aborted on Ctrl-C; long-running commands stop new work when it fires. */
  readonly signal: AbortSignal;
  /** All of standard input, for commands that read `-`; absent when there is none to read. */
  readonly readStdin?: () => Promise<string>;
  /** Asks a question on the terminal and returns the answer; absent without a terminal. */
  readonly ask?: (question: string) => Promise<string>;
}

export function processIo(signal: AbortSignal): CliIo {
  const interactive = Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY);
  return {
    ...(interactive ? { ask } : {}),
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTty: Boolean(process.stdout.isTTY),
    signal,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
