// Turning PATH arguments into manifest texts: files as given, directories
// walked recursively for .yaml/.yml/.json (sorted, so output is stable), `-`
// for standard input. A path that cannot be read becomes a finding, not a
// failure: the other inputs are still checked. Inputs larger than
// MAX_INPUT_BYTES are refused before they are parsed.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { tooLargeFinding, unreadableFinding, type Finding } from './findings.js';
import type { SourceText } from './source.js';

export const STDIN_PATH = '<stdin>';
const MANIFEST_EXTENSIONS = /\.(ya?ml|json)$/i;
/** Never manifests, often huge. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);
/**
 * The largest input lint parses. The yaml library's document tree costs
 * about 60 times the text in memory and parsing runs at a few MB a second,
 * so a 60 MB file took two minutes and 3.6 GB. The API server takes objects
 * of up to 3 MiB and etcd stores 1.5 MiB; whole rendered charts with their
 * CRDs stay within a few MiB.
 */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

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
  /** Default MAX_INPUT_BYTES. */
  readonly maxBytes?: number;
}

export async function readInputs(paths: readonly string[], env: InputEnv): Promise<Inputs> {
  const files: InputFile[] = [];
  const unreadable: Finding[] = [];
  const maxBytes = env.maxBytes ?? MAX_INPUT_BYTES;
  for (const path of paths) {
    if (path === '-') {
      if (env.readStdin === undefined) {
        unreadable.push(unreadableFinding(STDIN_PATH, 'standard input is not available'));
        continue;
      }
      const text = await env.readStdin();
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > maxBytes) unreadable.push(tooLargeFinding(STDIN_PATH, bytes, maxBytes));
      else files.push({ path: STDIN_PATH, text, absolute: undefined });
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
        const { size } = await stat(file.absolute);
        if (size > maxBytes) {
          unreadable.push(tooLargeFinding(file.path, size, maxBytes));
          continue;
        }
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
  const entries = (await readdir(absolute, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
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
