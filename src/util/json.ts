import { createHash } from 'node:crypto';

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

/** Gathers small strings into ~64 KiB pieces: one hash update (or write) per string would dominate. */
export class ChunkedWriter {
  private pending: string[] = [];
  private size = 0;
  constructor(private readonly sink: { update(piece: string): unknown }) {}
  write(s: string): void {
    this.pending.push(s);
    this.size += s.length;
    if (this.size >= 65536) this.flush();
  }
  flush(): void {
    if (this.pending.length > 0) this.sink.update(this.pending.join(''));
    this.pending = [];
    this.size = 0;
  }
}

/** What JSON.stringify leaves out of objects (and writes as null in arrays). */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/**
 * Writes exactly `JSON.stringify(value, null, indent)` piece by piece, so a
 * plan of hundreds of MB never becomes one string. Plain data only (objects,
 * arrays, strings, numbers, booleans, null): no toJSON, no replacer.
 */
export function writeJsonPretty(value: unknown, indent: number, out: (s: string) => void, pad = ''): void {
  if (value === null || typeof value !== 'object') {
    out(JSON.stringify(value));
    return;
  }
  // Indent 0 is JSON.stringify's compact form: no newlines, no space after ':'.
  const inner = pad + ' '.repeat(indent);
  const [open, next, close] = indent > 0 ? [`\n${inner}`, `,\n${inner}`, `\n${pad}`] : ['', ',', ''];
  if (Array.isArray(value)) {
    if (value.length === 0) return void out('[]');
    out('[');
    value.forEach((item, i) => {
      out(i === 0 ? open : next);
      if (omitted(item)) out('null');
      else writeJsonPretty(item, indent, out, inner);
    });
    out(`${close}]`);
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => !omitted(record[k]));
  if (keys.length === 0) return void out('{}');
  out('{');
  keys.forEach((k, i) => {
    out(`${i === 0 ? open : next}${JSON.stringify(k)}${indent > 0 ? ': ' : ':'}`);
    writeJsonPretty(record[k], indent, out, inner);
  });
  out(`${close}}`);
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
