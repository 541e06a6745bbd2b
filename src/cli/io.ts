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
  /**
   * The streams without escaping of control characters (see terminal.ts): only
   * for colours and redraws composed from values already escaped.
   */
  readonly raw?: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void };
}

export function processIo(signal: AbortSignal): CliIo {
  const interactive = Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY);
  return {
    ...(interactive ? { ask } : {}),
    stdout: writerTo(process.stdout),
    stderr: writerTo(process.stderr),
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

/**
 * Writes to a standard stream; once its reader is gone (EPIPE: `kubemix … | head`)
 * further output is dropped instead of crashing the run. The run goes on and
 * exits with its own code; the per-host logs in the state directory keep
 * everything.
 */
function writerTo(stream: NodeJS.WriteStream): (text: string) => void {
  let open = true;
  const closed = (error: unknown): boolean => (error as NodeJS.ErrnoException | null)?.code === 'EPIPE';
  stream.on('error', (error) => {
    if (!closed(error)) throw error;
    open = false;
  });
  return (text) => {
    if (!open) return;
    try {
      stream.write(text);
    } catch (error) {
      if (!closed(error)) throw error;
      open = false;
    }
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
