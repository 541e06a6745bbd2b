// A host's effective vars and groups, as Ansible computes them: vars of
// `all`, then of every group the host is in (directly or through a child
// group) from the shallowest to the deepest, then the host's own vars. Each
// value keeps the line it was set on, for warnings that name it.
import type { Inventory } from './types.js';

export interface SetVar {
  readonly value: unknown;
  readonly line: number;
}

/** Every group the host belongs to, directly or as a descendant. */
export function groupsOf(inv: Inventory, host: string): Set<string> {
  const out = new Set<string>(['all']);
  const parents = parentMap(inv);
  const queue = [...inv.groups.values()].filter((g) => g.hosts.includes(host)).map((g) => g.name);
  while (queue.length > 0) {
    const g = queue.pop() as string;
    if (out.has(g)) continue;
    out.add(g);
    queue.push(...(parents.get(g) ?? []));
  }
  return out;
}

export function effectiveVars(inv: Inventory, host: string): Map<string, SetVar> {
  const depths = groupDepths(inv);
  const groups = [...groupsOf(inv, host)].sort(
    (a, b) => (depths.get(a) ?? 0) - (depths.get(b) ?? 0) || a.localeCompare(b),
  );
  const out = new Map<string, SetVar>();
  for (const name of groups) {
    const g = inv.groups.get(name);
    for (const [k, value] of g?.vars ?? []) out.set(k, { value, line: g?.varLines.get(k) ?? g?.line ?? 0 });
  }
  const h = inv.hosts.get(host);
  for (const [k, value] of h?.vars ?? []) out.set(k, { value, line: h?.varLines.get(k) ?? h?.line ?? 0 });
  return out;
}

function parentMap(inv: Inventory): Map<string, string[]> {
  const parents = new Map<string, string[]>();
  for (const g of inv.groups.values()) for (const c of g.children) parents.set(c, [...(parents.get(c) ?? []), g.name]);
  return parents;
}

/** Distance from `all` along the longest parent chain (cycles are cut). */
function groupDepths(inv: Inventory): Map<string, number> {
  const parents = parentMap(inv);
  const depths = new Map<string, number>([['all', 0]]);
  const depth = (g: string, seen: Set<string>): number => {
    const known = depths.get(g);
    if (known !== undefined) return known;
    if (seen.has(g)) return 1;
    seen.add(g);
    const ps = (parents.get(g) ?? []).filter((p) => p !== 'all');
    const d = ps.length === 0 ? 1 : Math.max(...ps.map((p) => depth(p, seen))) + 1;
    depths.set(g, d);
    return d;
  };
  for (const g of inv.groups.keys()) depth(g, new Set());
  return depths;
}
