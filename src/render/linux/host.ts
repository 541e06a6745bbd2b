// Files every Linux node gets before Kubernetes: the kernel modules and
// sysctls kubelet, containerd and flannel need (br_netfilter,
// bridge-nf-call-iptables, ip_forward: Kubernetes docs, "Container Runtimes"
// → network configuration), and the /etc/hosts block naming this node, the
// API endpoint and the registry.
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
  return {
    node: node.name,
    remotePath: MODULES_FILE,
    mode: '0644',
    owner: 'root:root',
    content: `${HEADER}\n${KERNEL_MODULES.join('\n')}\n`,
  };
}

export function renderSysctls(node: PlanNode): RenderedArtifact {
  const lines = Object.entries(SYSCTLS).map(([k, v]) => `${k} = ${v}`);
  return {
    node: node.name,
    remotePath: SYSCTL_FILE,
    mode: '0644',
    owner: 'root:root',
    content: `${HEADER}\n${lines.join('\n')}\n`,
  };
}

export const HOSTS_BEGIN = '# BEGIN kubemix';
export const HOSTS_END = '# END kubemix';

/**
 * The block kubemix owns in /etc/hosts: only the names this node itself uses —
 * its own name (kubelet and kubeadm look it up), the API endpoint (so the node
 * reaches it before, or without, the services node's DNS) and the registry
 * when the services node runs one. Kubernetes reaches other nodes by their
 * InternalIP, never by these names, so listing every node here would only
 * make the plan grow with the square of the cluster's size.
 */
export function hostsBlock(model: ClusterModel, node: PlanNode): string {
  const api = model.cluster.apiEndpoint;
  const lines = [`${node.ip} ${node.fqdn} ${node.name}`, `${api.address} ${api.host}`];
  const registry = registryAddress(model);
  if (registry !== undefined) lines.push(`${registry.ip} ${registry.host}`);
  return [HOSTS_BEGIN, ...lines, HOSTS_END].join('\n');
}

/** The registry's name and address, when the services node runs the registry. */
function registryAddress(model: ClusterModel): { ip: string; host: string } | undefined {
  const services = model.nodes.find((n) => n.role === 'services');
  if (services === undefined || model.services?.registry !== true) return undefined;
  return { ip: services.ip, host: `registry.${model.cluster.name}.${model.cluster.domain}` };
}
