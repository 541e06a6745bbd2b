// After parsing, Ansible puts every group without a parent under `all`, and
// every host that belongs to no group but `all` into `ungrouped` (and takes
// it out of `ungrouped` once it is in a real group).
import { addMember, type Inventory } from './types.js';

export function reconcile(inv: Inventory): void {
  const all = inv.groups.get('all');
  const ungrouped = inv.groups.get('ungrouped');
  if (all === undefined || ungrouped === undefined) return;
  const hasParent = new Set<string>();
  for (const g of inv.groups.values()) for (const c of g.children) hasParent.add(c);
  for (const g of inv.groups.values()) if (g.name !== 'all' && !hasParent.has(g.name)) addMember(all.children, g.name);
  const grouped = new Set<string>();
  for (const g of inv.groups.values())
    if (g.name !== 'all' && g.name !== 'ungrouped') for (const h of g.hosts) grouped.add(h);
  for (const host of inv.hosts.keys()) {
    const inUngrouped = ungrouped.hosts.indexOf(host);
    if (grouped.has(host)) {
      if (inUngrouped >= 0) ungrouped.hosts.splice(inUngrouped, 1);
    } else if (inUngrouped < 0) addMember(ungrouped.hosts, host);
  }
  all.hosts.splice(0, all.hosts.length);
}
