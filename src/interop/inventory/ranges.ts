// Host patterns as Ansible expands them: `web[01:03]` (zero padding kept),
// `node[a:c]`, `n[1:9:2]` (step), several ranges in one name, and an optional
// `:port` suffix (`db[1:2]:2222`, `[2001:db8::1]:22` is not supported).

export interface HostPattern {
  readonly names: string[];
  readonly port?: number;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Throws an Error with a human message when the pattern is malformed. */
export function expandHostPattern(pattern: string): HostPattern {
  const m = /^(.*?)(?::(\d+))?$/.exec(pattern);
  const base = m?.[1] ?? pattern;
  const port = m?.[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`port ${port} out of range`);
  if (base === '') throw new Error('empty host name');
  const names = expandRanges(base);
  return port === undefined ? { names } : { names, port };
}

function expandRanges(name: string): string[] {
  const open = name.indexOf('[');
  if (open < 0) {
    if (name.includes(']')) throw new Error(`unbalanced "]" in ${name}`);
    return [name];
  }
  const close = name.indexOf(']', open);
  if (close < 0) throw new Error(`unbalanced "[" in ${name}`);
  const head = name.slice(0, open);
  const tail = name.slice(close + 1);
  const out: string[] = [];
  for (const item of rangeItems(name.slice(open + 1, close))) out.push(...expandRanges(`${head}${item}${tail}`));
  return out;
}

function rangeItems(body: string): string[] {
  const parts = body.split(':');
  if (parts.length < 2 || parts.length > 3) throw new Error(`host range [${body}] must be [begin:end] or [begin:end:step]`);
  const [rawBeg = '', end = '', rawStep = ''] = parts;
  const beg = rawBeg === '' ? '0' : rawBeg;
  if (end === '') throw new Error(`host range [${body}] needs an end`);
  const step = rawStep === '' ? 1 : Number(rawStep);
  if (!Number.isInteger(step) || step < 1) throw new Error(`host range [${body}] has a bad step`);
  const alpha = LETTERS.indexOf(beg);
  if (beg.length === 1 && end.length === 1 && alpha >= 0 && LETTERS.includes(end)) {
    const last = LETTERS.indexOf(end);
    if (alpha > last) throw new Error(`host range [${body}] must have begin <= end`);
    return every(alpha, last, step).map((i) => LETTERS[i] as string);
  }
  if (!/^\d+$/.test(beg) || !/^\d+$/.test(end)) throw new Error(`host range [${body}] is neither numeric nor alphabetic`);
  const padded = beg.length > 1 && beg.startsWith('0');
  if (padded && beg.length !== end.length) throw new Error(`host range [${body}] must have begin and end of equal length`);
  return every(Number(beg), Number(end), step).map((n) => (padded ? String(n).padStart(beg.length, '0') : String(n)));
}

function every(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i += step) out.push(i);
  return out;
}
