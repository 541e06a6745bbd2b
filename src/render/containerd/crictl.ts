// crictl's own configuration on a Linux node: without it crictl probes a list
// of deprecated sockets and warns on every call, so an operator running
// `crictl ps` while debugging a node reads warnings before the answer. Names
// containerd's socket for runtime and images, as kubeadm's CRI socket does.
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../types.js';
import { CONTAINERD_PATHS as P } from './paths.js';

export const CRICTL_CONFIG = '/etc/crictl.yaml';

export function renderCrictlConfig(node: PlanNode): RenderedArtifact {
  const content = `# Rendered by kubemix; re-plan instead of editing.
runtime-endpoint: unix://${P.socket}
image-endpoint: unix://${P.socket}
timeout: 10
`;
  return { node: node.name, remotePath: CRICTL_CONFIG, mode: '0644', owner: 'root:root', content };
}
