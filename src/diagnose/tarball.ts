// A gzip-compressed tar archive of the diagnose bundle, in the POSIX ustar
// format (POSIX.1-2001 pax/ustar header: 512-byte blocks, octal numeric
// fields, the checksum over the header with its own field as spaces, two
// zero blocks at the end), so any tar reads it. Entries are owner-only
// (directories 0700, files 0600), like the bundle directory. Pure: entries
// in, bytes out.
import { gzipSync } from 'node:zlib';

export interface TarEntry {
  /** Path inside the archive, `/`-separated; a directory's ends with `/`. */
  readonly path: string;
  /** Undefined for a directory. */
  readonly content?: string;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** Splits a long path into ustar's prefix (155) and name (100) at a `/`. */
function splitPath(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  const cut = path.lastIndexOf('/', path.length - 2);
  const name = path.slice(cut + 1);
  const prefix = path.slice(0, cut);
  if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155)
    throw new Error(`tar: path too long for ustar: ${path}`);
  return { name, prefix };
}

function header(entry: TarEntry, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const dir = entry.content === undefined;
  const { name, prefix } = splitPath(entry.path);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(dir ? 0o700 : 0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(dir ? '5' : '0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write('root', 265, 'ascii');
  h.write('root', 297, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** The archive, gzip-compressed. `mtime`: seconds since the epoch, for every entry. */
export function tarGz(entries: readonly TarEntry[], mtime: number): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = e.content === undefined ? Buffer.alloc(0) : Buffer.from(e.content, 'utf8');
    parts.push(header(e, body.length, Math.floor(mtime)), body);
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(parts));
}
