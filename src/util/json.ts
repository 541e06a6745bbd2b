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

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Writes exactly `JSON.stringify(value, null, indent)` piece by piece, so a
 * plan of hundreds of MB never becomes one string: objects key by key, arrays
 * item by item, each item in one `JSON.stringify` (an item such as a task is
 * a few KiB). An item stringified alone differs from the same item nested
 * only in that each of its newlines is followed by the nesting's indentation:
 * JSON escapes every newline inside a string, so the newlines are all layout.
 * Plain data only (objects, arrays, strings, numbers, booleans, null): no
 * toJSON, no replacer.
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
      else if (indent === 0) out(JSON.stringify(item));
      else out(JSON.stringify(item, null, indent).replaceAll('\n', `\n${inner}`));
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

/**
 * Canonical JSON, piece by piece: objects key by key in sorted order, array
 * items each in one `JSON.stringify` with all the item's keys, sorted, as its
 * property list (JSON.stringify then writes every object of the item with its
 * keys in that order and skips those it lacks). A list naming a key objects
 * inherit (`__proto__`, `toString`) would make it write inherited values, so
 * such an item is written key by key instead.
 */
function writeCanonical(value: unknown, out: (s: string) => void): void {
  if (Array.isArray(value)) {
    out('[');
    value.forEach((item, i) => {
      if (i > 0) out(',');
      // JSON.stringify writes undefined, functions and symbols in arrays as null.
      if (omitted(item)) out('null');
      else if (item === null || typeof item !== 'object') out(JSON.stringify(item));
      else {
        const keys = new Set<string>();
        collectKeys(item, keys);
        if ([...keys].some((k) => k in Object.prototype)) writeCanonical(item, out);
        else out(JSON.stringify(item, [...keys].sort(byName)));
      }
    });
    out(']');
    return;
  }
  if (value === null || typeof value !== 'object') {
    out(JSON.stringify(value));
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort(byName);
  out('{');
  keys.forEach((k, i) => {
    out(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
    writeCanonical(record[k], out);
  });
  out('}');
}

/** Every key of every object in `value`. */
function collectKeys(value: unknown, keys: Set<string>): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectKeys(item, keys);
    return;
  }
  for (const k of Object.keys(value)) {
    keys.add(k);
    collectKeys((value as Record<string, unknown>)[k], keys);
  }
}
