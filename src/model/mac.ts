// Stable, unique MAC addresses in QEMU's locally administered range
// 52:54:00, derived from cluster and node name so re-planning never changes them.
import { createHash } from 'node:crypto';

export function macFor(cluster: string, node: string, attempt = 0): string {
  const digest = createHash('sha256')
    .update(`${cluster}/${node}${attempt === 0 ? '' : `#${attempt}`}`)
    .digest();
  const tail = [digest[0], digest[1], digest[2]].map((b) => (b ?? 0).toString(16).padStart(2, '0'));
  return `52:54:00:${tail.join(':')}`;
}

/** One MAC per node; on the (rare) collision the later node rehashes. */
export function assignMacs(cluster: string, nodes: readonly string[]): Map<string, string> {
  const used = new Set<string>();
  const out = new Map<string, string>();
  for (const node of nodes) {
    let attempt = 0;
    let mac = macFor(cluster, node);
    while (used.has(mac)) mac = macFor(cluster, node, ++attempt);
    used.add(mac);
    out.set(node, mac);
  }
  return out;
}
