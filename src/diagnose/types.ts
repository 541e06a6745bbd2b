// What the failure signatures read and say. Pure types.
import type { PlanCluster, PlanNode } from '../model/types.js';

export interface NodeSections {
  readonly node: Pick<PlanNode, 'name' | 'osFamily' | 'role'>;
  readonly sections: ReadonlyMap<string, string>;
}

export interface Finding {
  readonly id: string;
  readonly node: string;
  readonly cause: string;
  readonly evidence: string;
  readonly next: string;
  readonly reference?: string;
}

/** The cluster as the signatures see it: with HostProcess flannel, flanneld and kube-proxy are pods on Windows. */
export type DiagnosedCluster = PlanCluster & { readonly windowsHostProcess?: boolean };
