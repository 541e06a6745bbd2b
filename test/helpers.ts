// Shared by the tests: where the repository is, and a CliIo that captures
// output so the CLI runs in-process.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../src/cli/io.js';

/** The checkout root (tests run from dist/, fixtures live in the sources). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the tests');
    dir = parent;
  }
  return dir;
}

export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

export function captureIo(options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): CapturedIo {
  let out = '';
  let err = '';
  const stdin = options.stdin;
  return {
    stdout: (text) => { out += text; },
    stderr: (text) => { err += text; },
    env: options.env ?? {},
    cwd: options.cwd ?? repoRoot(),
    isTty: false,
    signal: new AbortController().signal,
    ...(stdin === undefined ? {} : { readStdin: () => Promise.resolve(stdin) }),
    out: () => out,
    err: () => err,
  };
}
