// The inventory in the shape `ansible-inventory --list --export` prints it
// (hosts with their own vars, groups with hosts, children and vars; empty
// parts left out, names sorted), so the two can be compared differentially.
import type { Inventory } from './types.js';

export interface ListedGroup {
  hosts?: string[];
  children?: string[];
  vars?: Record<string, unknown>;
}

export interface ListedInventory {
  readonly hosts: Record<string, Record<string, unknown>>;
  readonly groups: Record<string, ListedGroup>;
}

export function listInventory(inv: Inventory): ListedInventory {
  const hosts: Record<string, Record<string, unknown>> = {};
  for (const name of [...inv.hosts.keys()].sort()) hosts[name] = sortedObject(inv.hosts.get(name)?.vars ?? new Map());
  const groups: Record<string, ListedGroup> = {};
  for (const name of [...inv.groups.keys()].sort()) {
    const g = inv.groups.get(name);
    if (g === undefined) continue;
    const entry: ListedGroup = {};
    if (g.hosts.length > 0) entry.hosts = [...g.hosts].sort();
    if (g.children.length > 0) entry.children = [...g.children].sort();
    if (g.vars.size > 0) entry.vars = sortedObject(g.vars);
    // Ansible leaves groups with nothing in them out of its listing.
    if (Object.keys(entry).length > 0) groups[name] = entry;
  }
  return { hosts, groups };
}

/** `ansible-inventory --list --export` JSON → the same shape. */
export function listFromAnsible(json: Record<string, unknown>): ListedInventory {
  const meta = (json['_meta'] ?? {}) as { hostvars?: Record<string, Record<string, unknown>> };
  const hosts: Record<string, Record<string, unknown>> = {};
  const groups: Record<string, ListedGroup> = {};
  for (const [name, vars] of Object.entries(meta.hostvars ?? {})) hosts[name] = vars;
  for (const [name, raw] of Object.entries(json)) {
    if (name === '_meta') continue;
    const g = raw as ListedGroup;
    const entry: ListedGroup = {};
    for (const h of g.hosts ?? []) hosts[h] ??= {};
    if (g.hosts !== undefined && g.hosts.length > 0) entry.hosts = [...g.hosts].sort();
    if (g.children !== undefined && g.children.length > 0) entry.children = [...g.children].sort();
    if (g.vars !== undefined && Object.keys(g.vars).length > 0) entry.vars = g.vars;
    if (Object.keys(entry).length > 0) groups[name] = entry;
  }
  const sortedHosts: Record<string, Record<string, unknown>> = {};
  for (const name of Object.keys(hosts).sort()) sortedHosts[name] = sortKeys(hosts[name] ?? {});
  const sortedGroups: Record<string, ListedGroup> = {};
  for (const name of Object.keys(groups).sort()) {
    const g = groups[name] ?? {};
    sortedGroups[name] = g.vars === undefined ? g : { ...g, vars: sortKeys(g.vars) };
  }
  return { hosts: sortedHosts, groups: sortedGroups };
}

function sortedObject(vars: Map<string, unknown>): Record<string, unknown> {
  return sortKeys(Object.fromEntries(vars));
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, deepSorted(o[k])]),
  );
}

function deepSorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(deepSorted);
  if (v !== null && typeof v === 'object') return sortKeys(v as Record<string, unknown>);
  return v;
}
