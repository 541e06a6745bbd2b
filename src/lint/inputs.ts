// Turning PATH arguments into manifest texts: files as given, directories
// walked recursively for .yaml/.yml/.json (sorted, so output is stable), `-`
// for standard input. A path that cannot be read becomes a finding, not a
// failure: the other inputs are still checked.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { unreadableFinding, type Finding } from './findings.js';
import type { SourceText } from './source.js';

export const STDIN_PATH = '<stdin>';
const MANIFEST_EXTENSIONS = /\.(ya?ml|json)$/i;
/** Never manifests, often huge. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

export interface InputFile extends SourceText {
  /** Where to write fixes; undefined for stdin. */
  readonly absolute: string | undefined;
}

export interface Inputs {
  readonly files: readonly InputFile[];
  readonly unreadable: readonly Finding[];
}

export interface InputEnv {
  readonly cwd: string;
  readonly readStdin: (() => Promise<string>) | undefined;
}

export async function readInputs(paths: readonly string[], env: InputEnv): Promise<Inputs> {
  const files: InputFile[] = [];
  const unreadable: Finding[] = [];
  for (const path of paths) {
    if (path === '-') {
      if (env.readStdin === undefined) unreadable.push(unreadableFinding(STDIN_PATH, 'standard input is not available'));
      else files.push({ path: STDIN_PATH, text: await env.readStdin(), absolute: undefined });
      continue;
    }
    let found: { path: string; absolute: string }[];
    try {
      found = await expand(path, resolve(env.cwd, path));
    } catch (error) {
      unreadable.push(unreadableFinding(path, cannotRead(error)));
      continue;
    }
    for (const file of found) {
      try {
        files.push({ path: file.path, text: await readFile(file.absolute, 'utf8'), absolute: file.absolute });
      } catch (error) {
        unreadable.push(unreadableFinding(file.path, cannotRead(error)));
      }
    }
  }
  return { files, unreadable };
}

function cannotRead(error: unknown): string {
  return `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
}

async function expand(path: string, absolute: string): Promise<{ path: string; absolute: string }[]> {
  if (!(await stat(absolute)).isDirectory()) return [{ path, absolute }];
  const entries = (await readdir(absolute, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: { path: string; absolute: string }[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) continue;
      out.push(...(await expand(join(path, entry.name), join(absolute, entry.name))));
    } else if (entry.isFile() && MANIFEST_EXTENSIONS.test(entry.name)) {
      out.push({ path: join(path, entry.name), absolute: join(absolute, entry.name) });
    }
  }
  return out;
}
