// What the failure signatures read and say. Pure types.
import type { PlanCluster, PlanNode } from '../model/types.js';
import type { ShellText } from '../util/escape/index.js';

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

/**
 * What `diagnose` collects from a node: a name and one read-only command.
 * Linux commands are script text made by the `shell` template (every value
 * escaped for where it lands); Windows ones PowerShell text whose values go
 * through psQuote (render/windows/ps.ts `q`).
 */
export interface Section<Command extends ShellText | string = ShellText> {
  readonly name: string;
  readonly command: Command;
}

export type PowerShellSection = Section<string>;
