// Files every Linux node gets before Kubernetes: the kernel modules and
// sysctls kubelet, containerd and flannel need (br_netfilter,
// bridge-nf-call-iptables, ip_forward: Kubernetes docs, "Container Runtimes"
// → network configuration), and the
// /etc/hosts block naming every node and the API endpoint.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';

export const MODULES_FILE = '/etc/modules-load.d/kubemix.conf';
export const SYSCTL_FILE = '/etc/sysctl.d/90-kubemix.conf';
export const KERNEL_MODULES = ['br_netfilter', 'overlay'] as const;
export const SYSCTLS: Readonly<Record<string, string>> = {
  'net.bridge.bridge-nf-call-ip6tables': '1',
  'net.bridge.bridge-nf-call-iptables': '1',
  'net.ipv4.ip_forward': '1',
};

const HEADER = '# Rendered by kubemix; re-plan instead of editing.';

export function renderModules(node: PlanNode): RenderedArtifact {
  return { node: node.name, remotePath: MODULES_FILE, mode: '0644', owner: 'root:root', content: `${HEADER}\n${KERNEL_MODULES.join('\n')}\n` };
}

export function renderSysctls(node: PlanNode): RenderedArtifact {
  const lines = Object.entries(SYSCTLS).map(([k, v]) => `${k} = ${v}`);
  return { node: node.name, remotePath: SYSCTL_FILE, mode: '0644', owner: 'root:root', content: `${HEADER}\n${lines.join('\n')}\n` };
}

export const HOSTS_BEGIN = '# BEGIN kubemix';
export const HOSTS_END = '# END kubemix';

/**
 * The block kubemix owns in /etc/hosts. The API name is here too, so nodes
 * reach the endpoint even before (or without) the services node's DNS.
 */
export function hostsBlock(model: ClusterModel): string {
  const api = model.cluster.apiEndpoint;
  const nodes = model.nodes.map((n) => `${n.ip} ${n.fqdn} ${n.name}`);
  return [HOSTS_BEGIN, ...nodes, `${api.address} ${api.host}`, HOSTS_END].join('\n');
}
