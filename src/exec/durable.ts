// Crash-safe file replacement: write a temp file, fsync it, rename it over
// the target, fsync the directory. After `kill -9` (or power loss) the file
// is either the old or the new version, never a torn one.
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let counter = 0;

/** `owner`: the uid and gid the file keeps (when the one replaced belonged to someone else and we may chown). */
export async function writeFileDurable(
  path: string,
  data: string | Buffer,
  mode = 0o600,
  owner?: { readonly uid: number; readonly gid: number },
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${++counter}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      if (owner !== undefined && process.getuid?.() === 0) await handle.chown(owner.uid, owner.gid);
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    // Nothing half-written is left behind: the temporary file goes with the failure.
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDir(dir);
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates a directory (and parents) readable by the owner only. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}
