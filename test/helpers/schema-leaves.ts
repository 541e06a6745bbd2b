// Every string field the cluster spec schema allows, found by walking the
// zod schema itself (objects, arrays, records, unions, wrappers), so a field
// added to the schema is covered without editing a list.
import type { z } from 'zod';

/** A path pattern: object keys, `[]` for every array element, `{key}` / `{value}` for record entries. */
export type LeafPath = readonly string[];

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
}

function def(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

export function stringLeaves(schema: z.ZodType, at: LeafPath = []): LeafPath[] {
  const d = def(schema);
  if (d.innerType !== undefined) return stringLeaves(d.innerType, at);
  switch (d.type) {
    case 'string':
      return [at];
    case 'pipe':
      return d.in === undefined ? [] : stringLeaves(d.in, at);
    case 'object':
      return Object.entries(d.shape ?? {}).flatMap(([k, s]) => stringLeaves(s, [...at, k]));
    case 'array':
      return d.element === undefined ? [] : stringLeaves(d.element, [...at, '[]']);
    case 'record':
      return [
        ...(d.keyType === undefined ? [] : stringLeaves(d.keyType, [...at, '{key}'])),
        ...(d.valueType === undefined ? [] : stringLeaves(d.valueType, [...at, '{value}'])),
      ];
    case 'union': {
      const seen = new Map<string, LeafPath>();
      for (const o of d.options ?? []) for (const p of stringLeaves(o, at)) seen.set(p.join('.'), p);
      return [...seen.values()];
    }
    default:
      return [];
  }
}

/** One place a leaf pattern matches in a document, as a spec path and a setter. */
export interface Slot {
  readonly path: string;
  /** Where a spec error about this slot is reported: its path, or for a record key the record's. */
  readonly reportedAt: string;
  readonly current: string | undefined;
  set(doc: Record<string, unknown>, value: string): void;
}

/**
 * The slots of `pattern` in `doc`: every array element and record entry that
 * exists, and the field itself when its parent object exists but it is absent.
 */
export function slotsOf(
  doc: unknown,
  pattern: LeafPath,
  prefix = '',
  steps: readonly (string | number)[] = [],
): Slot[] {
  const [head, ...rest] = pattern;
  if (head === undefined || doc === null || typeof doc !== 'object') return [];
  const obj = doc as Record<string, unknown>;
  if (head === '[]') {
    if (!Array.isArray(doc)) return [];
    return doc.flatMap((item, i) =>
      rest.length === 0
        ? [slot(`${prefix}[${i}]`, [...steps, i], typeof item === 'string' ? item : undefined)]
        : slotsOf(item, rest, `${prefix}[${i}]`, [...steps, i]),
    );
  }
  if (head === '{value}')
    // A record's values: the value itself, or (an object per key, like spec.downloads) the fields under it.
    return Object.keys(obj).flatMap((k) =>
      rest.length === 0
        ? [slot(`${prefix}.${k}`, [...steps, k], typeof obj[k] === 'string' ? obj[k] : undefined)]
        : slotsOf(obj[k], rest, `${prefix}.${k}`, [...steps, k]),
    );
  if (head === '{key}') {
    return Object.keys(obj).map((k) => ({
      path: `${prefix}.${k}`,
      reportedAt: prefix,
      current: k,
      set: (d: Record<string, unknown>, v: string) => renameKey(walk(d, steps), k, v),
    }));
  }
  const path = prefix === '' ? head : `${prefix}.${head}`;
  if (rest.length === 0)
    return Array.isArray(doc)
      ? []
      : [slot(path, [...steps, head], typeof obj[head] === 'string' ? obj[head] : undefined)];
  return slotsOf(obj[head], rest, path, [...steps, head]);
}

function slot(path: string, steps: readonly (string | number)[], current: string | undefined): Slot {
  return {
    path,
    reportedAt: path,
    current,
    set: (d, v) => {
      (walk(d, steps.slice(0, -1)) as Record<string | number, unknown>)[steps.at(-1) ?? ''] = v;
    },
  };
}

function walk(doc: unknown, steps: readonly (string | number)[]): Record<string, unknown> {
  let cur = doc as Record<string | number, unknown>;
  for (const s of steps) cur = cur[s] as Record<string | number, unknown>;
  return cur as Record<string, unknown>;
}

function renameKey(obj: Record<string, unknown>, from: string, to: string): void {
  const value = obj[from];
  delete obj[from];
  obj[to] = value;
}
