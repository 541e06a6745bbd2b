// Runs the CLI in-process with captured streams, as a user would see it.
import { fileURLToPath } from 'node:url';
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

export async function runCli(argv: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: options.env ?? {},
    cwd: options.cwd ?? repoPath(),
    isTty: false,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}

/** A stack trace shown to a user is a bug. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+\(.+:\d+:\d+\)/.test(text) || /\n\s+at file:\/\//.test(text);
}
