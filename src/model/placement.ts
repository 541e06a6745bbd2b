// Which hypervisor each VM runs on: the control plane and the services node
// on the first; workers round robin starting from the second, wrapping.
import type { Role } from '../spec/nodes.js';

export function placeOnHypervisors(
  nodes: readonly { name: string; role: Role }[],
  hypervisors: readonly string[],
): Map<string, string> {
  const out = new Map<string, string>();
  if (hypervisors.length === 0) return out;
  let worker = 0;
  for (const node of nodes) {
    if (node.role !== 'worker') {
      out.set(node.name, hypervisors[0] ?? '');
      continue;
    }
    out.set(node.name, hypervisors[(1 + worker) % hypervisors.length] ?? '');
    worker += 1;
  }
  return out;
}
