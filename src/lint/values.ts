// Narrowing helpers for manifest values. Manifests are user input: every
// field may be missing or of the wrong type, so rules read them through these
// instead of casting.

export type JsonMap = Readonly<Record<string, unknown>>;
/** A path from a document's root to a node: map keys and sequence indexes. */
export type NodePath = readonly (string | number)[];

export function asMap(value: unknown): JsonMap | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonMap) : undefined;
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Map entries whose values are strings (labels, selectors, nodeSelector). */
export function stringEntries(value: unknown): Readonly<Record<string, string>> {
  const map = asMap(value);
  const out: Record<string, string> = {};
  if (map === undefined) return out;
  for (const [k, v] of Object.entries(map)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

export function has(map: JsonMap | undefined, key: string): boolean {
  return map !== undefined && map[key] !== undefined && map[key] !== null;
}
