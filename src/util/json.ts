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

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Gathers small strings into ~64 KiB pieces: one hash update (or write) per
 * string would dominate. A string of 16 KiB or more goes on as it is, after
 * what was pending (joining it would only copy it).
 */
export class ChunkedWriter {
  private pending: string[] = [];
  private size = 0;
  constructor(private readonly sink: { update(piece: string): unknown }) {}
  write(s: string): void {
    if (s.length >= 16384) {
      this.flush();
      this.sink.update(s);
      return;
    }
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

/**
 * Array items per `JSON.stringify` call: one call per item was most of the
 * cost of writing a plan (34 000 tasks and artifacts at 1000 nodes), one call
 * for the whole array would hold all of it as one string. 32 tasks make
 * ~64 KiB.
 */
const ITEMS_PER_PIECE = 32;

/** What JSON.stringify leaves out of objects (and writes as null in arrays). */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Writes exactly `JSON.stringify(value, null, indent)` piece by piece, so a
 * plan of hundreds of MB never becomes one string: objects key by key, arrays
 * a few dozen items at a time (`prettyItems`). Plain data only (objects,
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
    out(`[${open}`);
    const depth = indent === 0 ? 0 : pad.length / indent;
    for (let i = 0; i < value.length; i += ITEMS_PER_PIECE)
      out(`${i === 0 ? '' : next}${prettyItems(value.slice(i, i + ITEMS_PER_PIECE), indent, depth)}`);
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
 * `items` as `JSON.stringify` writes them inside an array `depth` levels
 * deep, separators included, without the brackets: the items stringified
 * wrapped in `depth` one-element arrays, so `JSON.stringify` itself indents
 * them for that depth, and the wrappers' brackets cut off.
 */
function prettyItems(items: readonly unknown[], indent: number, depth: number): string {
  let wrapped: unknown = items;
  for (let i = 0; i < depth; i++) wrapped = [wrapped];
  const text = JSON.stringify(wrapped, null, indent);
  if (indent === 0) return text.slice(depth + 1, text.length - depth - 1);
  // Level j opens with `[`, a newline and (j + 1) indents; it closes with a newline, j indents and `]`.
  let head = 0;
  let tail = 0;
  for (let j = 0; j <= depth; j++) {
    head += 2 + indent * (j + 1);
    tail += 2 + indent * j;
  }
  return text.slice(head, text.length - tail);
}

/**
 * Canonical JSON, piece by piece: objects key by key in sorted order, arrays
 * a few dozen items at a time (`writeCanonicalItems`).
 */
function writeCanonical(value: unknown, out: (s: string) => void): void {
  if (Array.isArray(value)) {
    out('[');
    for (let i = 0; i < value.length; i += ITEMS_PER_PIECE) {
      if (i > 0) out(',');
      writeCanonicalItems(value.slice(i, i + ITEMS_PER_PIECE), out);
    }
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

/**
 * Array items, comma-separated, in one `JSON.stringify` with all their keys,
 * sorted, as its property list (JSON.stringify then writes every object with
 * its keys in that order and skips those it lacks; undefined, functions and
 * symbols in arrays as null, as it does unlisted). A list naming a key
 * objects inherit (`__proto__`, `toString`) would make it write inherited
 * values, so such items are written key by key instead.
 */
function writeCanonicalItems(items: readonly unknown[], out: (s: string) => void): void {
  const keys = new Set<string>();
  for (const item of items) collectKeys(item, keys);
  if (![...keys].some((k) => k in Object.prototype)) {
    const text = JSON.stringify(items, [...keys].sort(byName));
    out(text.slice(1, -1));
    return;
  }
  items.forEach((item, i) => {
    if (i > 0) out(',');
    if (omitted(item)) out('null');
    else writeCanonical(item, out);
  });
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
