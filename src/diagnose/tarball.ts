// A gzip-compressed tar archive of the diagnose bundle, written by tar-stream
// (ustar headers any tar reads). Entries are owner-only (directories 0700,
// files 0600), like the bundle directory.
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export interface TarEntry {
  /** Path inside the archive, `/`-separated; a directory's ends with `/`. */
  readonly path: string;
  /** Undefined for a directory. */
  readonly content?: string;
}

/** The archive, gzip-compressed. `mtime`: seconds since the epoch, for every entry. */
export async function tarGz(entries: readonly TarEntry[], mtime: number): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    archive.on('data', (chunk: unknown) => void chunks.push(Buffer.from(chunk as Uint8Array)));
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  const when = new Date(Math.floor(mtime) * 1000);
  for (const e of entries) {
    const common = { name: e.path, mtime: when, uid: 0, gid: 0, uname: 'root', gname: 'root' };
    if (e.content === undefined) archive.entry({ ...common, type: 'directory', mode: 0o700 });
    else archive.entry({ ...common, type: 'file', mode: 0o600 }, Buffer.from(e.content, 'utf8'));
  }
  archive.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}
