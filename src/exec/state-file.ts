// Reading back what kubemix keeps in a state directory (the journal, the
// secret store, the lock, an unfinished upgrade or patch roll). The files are
// ours, but a disk that filled up, an editor, a copy that was cut short or a
// hand that removed a line can leave them truncated, `null`, of the wrong
// shape or a directory. Each is read through one schema: what does not fit is
// exit 2 naming the file and how to recover, never a crash in the code that
// trusted its shape.
import type { z } from 'zod';
import { InputError } from '../errors.js';
import { readInputFile } from './local-paths.js';

/** State files are small; a journal of 100 000 tasks is ~30 MB. */
export const MAX_STATE_FILE_BYTES = 256 * 1024 * 1024;

export interface StateFile<T> {
  readonly path: string;
  readonly schema: z.ZodType<T>;
  /** The error code (`state.journal`, `state.secrets`, …). */
  readonly code: string;
  /** What to do about a damaged file. */
  readonly hint: string;
}

/** A damaged state file, as exit 2 naming it. */
export function damaged(file: Pick<StateFile<unknown>, 'path' | 'code' | 'hint'>, why: string): InputError {
  return new InputError(file.code, `cannot read ${file.path}: ${why}`, { path: file.path, hint: file.hint });
}

/** The file's bytes as text; undefined when it does not exist (nothing recorded yet). */
export function readStateText(file: Pick<StateFile<unknown>, 'path' | 'code' | 'hint'>): string | undefined {
  try {
    const bytes = readInputFile(
      { flag: file.path, given: file.path, cwd: '/', code: file.code },
      MAX_STATE_FILE_BYTES,
      'a state file',
      file.hint,
    );
    return bytes.toString('utf8');
  } catch (error) {
    if (error instanceof InputError && / does not exist$/.test(error.message)) return undefined;
    if (error instanceof InputError) throw damaged(file, error.message.replace(`${file.path} ${file.path}: `, ''));
    throw error;
  }
}

/** One JSON document checked against its schema. */
export function parseStateJson<T>(file: StateFile<T>, text: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const why = text.trim() === '' ? 'it is empty' : `not JSON (${(error as Error).message})`;
    throw damaged(file, why);
  }
  const parsed = file.schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
    throw damaged(file, `not what kubemix wrote there${where}: ${issue?.message ?? 'wrong shape'}`);
  }
  return parsed.data;
}

/** The file's document, or undefined when it does not exist. */
export function readStateJson<T>(file: StateFile<T>): T | undefined {
  const text = readStateText(file);
  return text === undefined ? undefined : parseStateJson(file, text);
}
