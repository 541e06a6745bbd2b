import { createHash, type Hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level: the form we hash. Equal to
 * `JSON.stringify` of a key-sorted copy, written without building that copy
 * (a 1000-node plan is tens of MB: a sorted copy doubled its memory).
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  writeCanonical(value, (s) => parts.push(s));
  return parts.join('');
}

/** sha256 (hex) of `canonicalJson(value)`, streamed into the hash in chunks. */
export function canonicalSha256(value: unknown): string {
  const hash = createHash('sha256');
  const chunk = new ChunkedWriter(hash);
  writeCanonical(value, (s) => chunk.write(s));
  chunk.flush();
  return hash.digest('hex');
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Gathers small strings into ~64 KiB pieces: one hash update per string would dominate. */
class ChunkedWriter {
  private pending: string[] = [];
  private size = 0;
  constructor(private readonly hash: Hash) {}
  write(s: string): void {
    this.pending.push(s);
    this.size += s.length;
    if (this.size >= 65536) this.flush();
  }
  flush(): void {
    if (this.pending.length > 0) this.hash.update(this.pending.join(''));
    this.pending = [];
    this.size = 0;
  }
}

function writeCanonical(value: unknown, out: (s: string) => void): void {
  if (Array.isArray(value)) {
    out('[');
    value.forEach((item, i) => {
      if (i > 0) out(',');
      // JSON.stringify writes undefined, functions and symbols in arrays as null.
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') out('null');
      else writeCanonical(item, out);
    });
    out(']');
    return;
  }
  if (value === null || typeof value !== 'object') {
    out(JSON.stringify(value));
    return;
  }
  const keys = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  out('{');
  keys.forEach((k, i) => {
    if (i > 0) out(',');
    out(JSON.stringify(k));
    out(':');
    writeCanonical((value as Record<string, unknown>)[k], out);
  });
  out('}');
}
