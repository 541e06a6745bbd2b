// The user's spec file, as `upgrade` rewrites it: read once before the run
// (bytes kept), refused up front when read-only, written at the end only if
// nobody changed it meanwhile — through a symlink to its target, keeping the
// target's mode and owner, and in place when the file has other hard links
// (a rename would leave them holding the old version).
import { accessSync, constants, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { InputError } from '../errors.js';
import { writeFileDurable } from '../exec/durable.js';

export interface SpecFileSnapshot {
  /** The path the user gave (for messages). */
  readonly file: string;
  /** Where the bytes live: the symlink's target, resolved. */
  readonly real: string;
  readonly bytes: Buffer;
  readonly text: string;
}

/** Reads the spec to be rewritten; a file kubemix may not write is refused before any work. */
export function snapshotSpecFile(file: string, what: string): SpecFileSnapshot {
  const real = realpathSync(file);
  const st = statSync(real);
  // root may write a 0444 file, but its owner said "do not change": the mode bits decide.
  let writable = (st.mode & 0o222) !== 0;
  try {
    accessSync(real, constants.W_OK);
  } catch {
    writable = false;
  }
  if (!writable)
    throw new InputError('upgrade.spec-read-only', `${file} is read-only; ${what} records the new version in it`, {
      path: file,
      hint: `make it writable (chmod u+w ${real}) and run the same command again`,
    });
  const bytes = readFileSync(real);
  return { file, real, bytes, text: bytes.toString('utf8') };
}

/** Writes `text` over the snapshot's file, unless the file changed since the snapshot. */
export async function rewriteSpecFile(snap: SpecFileSnapshot, text: string, byHand: string): Promise<void> {
  const now = readFileSync(snap.real);
  if (!now.equals(snap.bytes))
    throw new InputError('upgrade.spec-changed', `${snap.file} changed while kubemix ran; it was left as it is now`, {
      path: snap.file,
      hint: byHand,
    });
  const st = lstatSync(snap.real);
  const data = Buffer.from(text, 'utf8');
  if (st.nlink > 1) {
    const handle = await open(snap.real, 'r+');
    try {
      await handle.truncate(0);
      await handle.write(data, 0, data.length, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return;
  }
  await writeFileDurable(snap.real, data, st.mode & 0o7777, { uid: st.uid, gid: st.gid });
}
