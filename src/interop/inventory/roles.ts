// Which hosts of an inventory are cluster nodes, in which roles, on which OS:
// kubespray's and kubernetes-for-windows' group names (old and new spellings),
// and Windows recognised by group or by how Ansible connects to the host.
import { effectiveVars, groupsOf, type SetVar } from './host-vars.js';
import type { Inventory } from './types.js';

export const CONTROL_PLANE_GROUPS = ['kube_control_plane', 'kube-master', 'kube_master'] as const;
export const WORKER_GROUPS = ['kube_node', 'kube-node'] as const;
export const WINDOWS_GROUPS = ['node-windows', 'node_windows'] as const;
export const CLUSTER_GROUPS = ['k8s_cluster', 'k8s-cluster'] as const;

export interface ClassifiedHost {
  readonly name: string;
  readonly line: number;
  readonly vars: Map<string, SetVar>;
  readonly groups: Set<string>;
  readonly windows: boolean;
  readonly controlPlane: boolean;
  readonly worker: boolean;
  readonly etcd: boolean;
  readonly inCluster: boolean;
}

export function classifyHosts(inv: Inventory): ClassifiedHost[] {
  return [...inv.hosts.values()].map((h) => {
    const groups = groupsOf(inv, h.name);
    const vars = effectiveVars(inv, h.name);
    const inAny = (names: readonly string[]) => names.some((g) => groups.has(g));
    const windows = inAny(WINDOWS_GROUPS) || markedWindows(vars);
    const inCluster = inAny(CLUSTER_GROUPS);
    return {
      name: h.name,
      line: h.line,
      vars,
      groups,
      windows,
      controlPlane: inAny(CONTROL_PLANE_GROUPS),
      worker: inAny(WORKER_GROUPS) || inAny(WINDOWS_GROUPS) || (windows && inCluster),
      etcd: groups.has('etcd'),
      inCluster,
    };
  });
}

/** `ansible_connection=winrm|psrp` or a PowerShell/cmd shell over SSH. */
function markedWindows(vars: Map<string, SetVar>): boolean {
  const connection = String(vars.get('ansible_connection')?.value ?? '').toLowerCase();
  const shell = String(vars.get('ansible_shell_type')?.value ?? '').toLowerCase();
  return connection === 'winrm' || connection === 'psrp' || shell === 'powershell' || shell === 'cmd';
}

/** The line of the first group (of `names`) the inventory defines. */
export function groupLine(inv: Inventory, names: readonly string[]): number {
  for (const n of names) {
    const g = inv.groups.get(n);
    if (g !== undefined && g.line > 0) return g.line;
  }
  return 1;
}
