// Host patterns as Ansible expands them: `web[01:03]` (zero padding kept),
// `node[a:c]`, `n[1:9:2]` (step), several ranges in one name, and an optional
// `:port` suffix (`db[1:2]:2222`, `[2001:db8::1]:22` is not supported).

export interface HostPattern {
  readonly names: string[];
  readonly port?: number;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * An inventory names at most this many hosts. Kubernetes is tested up to
 * 5000 nodes per cluster ("Considerations for large clusters",
 * kubernetes.io); a cluster kubemix deploys from one inventory is far
 * smaller, and the limit keeps a 40-byte pattern such as
 * `n[1:1000]-[1:1000]-[1:100]` from expanding to 10^8 names.
 */
export const MAX_INVENTORY_HOSTS = 1000;

/** A pattern that names more hosts than allowed; thrown before any name is made. */
export class TooManyHostsError extends Error {
  constructor(
    readonly count: number,
    readonly limit: number,
  ) {
    super(
      `expands to ${count > Number.MAX_SAFE_INTEGER ? 'more than 2^53' : count} hosts, more than the ${limit} this inventory may still name`,
    );
  }
}

/**
 * Throws an Error with a human message when the pattern is malformed, and a
 * TooManyHostsError when it would name more than `limit` hosts: the count
 * is the product of the ranges' lengths, computed before expanding.
 */
export function expandHostPattern(pattern: string, limit: number = MAX_INVENTORY_HOSTS): HostPattern {
  const m = /^(.*?)(?::(\d+))?$/.exec(pattern);
  const base = m?.[1] ?? pattern;
  const port = m?.[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`port ${port} out of range`);
  if (base === '') throw new Error('empty host name');
  const parts = splitRanges(base);
  const count = parts.reduce((n, p) => n * (typeof p === 'string' ? 1 : p.count), 1);
  if (count > limit) throw new TooManyHostsError(count, limit);
  const names = expand(parts);
  return port === undefined ? { names } : { names, port };
}

interface Range {
  readonly count: number;
  readonly items: () => string[];
}

/** `cp[1:3]-x` → ['cp', Range(1..3), '-x']: literal text and ranges, in order. */
function splitRanges(name: string): (string | Range)[] {
  const parts: (string | Range)[] = [];
  let rest = name;
  for (;;) {
    const open = rest.indexOf('[');
    const close = rest.indexOf(']');
    if (open < 0) {
      if (close >= 0) throw new Error(`unbalanced "]" in ${name}`);
      parts.push(rest);
      return parts;
    }
    if (close >= 0 && close < open) throw new Error(`unbalanced "]" in ${name}`);
    const end = rest.indexOf(']', open);
    if (end < 0) throw new Error(`unbalanced "[" in ${name}`);
    parts.push(rest.slice(0, open), range(rest.slice(open + 1, end)));
    rest = rest.slice(end + 1);
  }
}

function expand(parts: readonly (string | Range)[]): string[] {
  let names = [''];
  for (const part of parts) {
    const items = typeof part === 'string' ? [part] : part.items();
    names = names.flatMap((head) => items.map((item) => `${head}${item}`));
  }
  return names;
}

function range(body: string): Range {
  const parts = body.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw new Error(`host range [${body}] must be [begin:end] or [begin:end:step]`);
  const [rawBeg = '', end = '', rawStep = ''] = parts;
  const beg = rawBeg === '' ? '0' : rawBeg;
  if (end === '') throw new Error(`host range [${body}] needs an end`);
  const step = rawStep === '' ? 1 : Number(rawStep);
  if (!Number.isSafeInteger(step) || step < 1) throw new Error(`host range [${body}] has a bad step`);
  const alpha = LETTERS.indexOf(beg);
  if (beg.length === 1 && end.length === 1 && alpha >= 0 && LETTERS.includes(end)) {
    const last = LETTERS.indexOf(end);
    if (alpha > last) throw new Error(`host range [${body}] must have begin <= end`);
    return { count: steps(alpha, last, step), items: () => every(alpha, last, step).map((i) => LETTERS[i] as string) };
  }
  if (!/^\d+$/.test(beg) || !/^\d+$/.test(end))
    throw new Error(`host range [${body}] is neither numeric nor alphabetic`);
  const padded = beg.length > 1 && beg.startsWith('0');
  if (padded && beg.length !== end.length)
    throw new Error(`host range [${body}] must have begin and end of equal length`);
  const from = Number(beg);
  const to = Number(end);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
    throw new Error(`host range [${body}] has a bound above 2^53`);
  return {
    count: steps(from, to, step),
    items: () => every(from, to, step).map((n) => (padded ? String(n).padStart(beg.length, '0') : String(n))),
  };
}

/** How many of from, from+step, … are <= to (0 when from > to, as Ansible's range() gives none). */
function steps(from: number, to: number, step: number): number {
  return from > to ? 0 : Math.floor((to - from) / step) + 1;
}

function every(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i += step) out.push(i);
  return out;
}
