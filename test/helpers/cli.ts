// Runs the CLI in-process with captured streams, as a user would see it.
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../src/cli/io.js';
import { run } from '../../src/cli/main.js';

/** Absolute path inside the repository (tests run from dist/test/…). */
export function repoPath(...parts: string[]): string {
  return fileURLToPath(new URL(`../../../${parts.join('/')}`, import.meta.url));
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

/** A CliIo that records what the CLI prints; `stdin` feeds `-` inputs. */
export function captureIo(options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): CapturedIo {
  let out = '';
  let err = '';
  const stdin = options.stdin;
  return {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    env: options.env ?? {},
    cwd: options.cwd ?? repoPath(),
    isTty: false,
    signal: new AbortController().signal,
    ...(stdin === undefined ? {} : { readStdin: () => Promise.resolve(stdin) }),
    out: () => out,
    err: () => err,
  };
}

export async function runCli(
  argv: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<CliResult> {
  const io = captureIo(options);
  const code = await run(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** A stack trace shown to a user is a bug. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+\(.+:\d+:\d+\)/.test(text) || /\n\s+at file:\/\//.test(text);
}
