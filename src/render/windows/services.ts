// flanneld's flags and kube-proxy's configuration on a Windows node. Both run
// as HostProcess pods (render/manifests/windows-hostprocess.ts) started by the
// scripts of launchers.ts, with the pod's own ServiceAccount token.
import { compareVersions } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { registeredName } from './kubeadm.js';
import { hnsNetworkName, podCidrV4 } from './network.js';
import { SOURCE_VIP_PLACEHOLDER, WIN } from './paths.js';

/**
 * flanneld's flags: no kubeconfig, so client-go's in-cluster config takes the
 * pod's projected token. Never the kubelet's kubeconfig: flannel lists and
 * watches every Node, which the Node authorizer denies a node
 * (AuthorizeNodeWithSelectors).
 */
export function flanneldArgs(node: Pick<PlanNode, 'ip'>): string[] {
  // No --ip-masq: on Windows masquerading is the CNI delegate's OutBoundNAT.
  return [
    '--kube-subnet-mgr',
    `--iface=${node.ip}`,
    `--net-config-path=${WIN.flannelNetConf}`,
    `--subnet-file=${WIN.subnetEnv}`,
  ];
}

/**
 * KubeProxyConfiguration with the source VIP left as a placeholder: the
 * kube-proxy pod's launcher takes the VIP at every start, once the network is
 * there. No clientConnection.kubeconfig: client-go's in-cluster config takes
 * the pod's projected token (kube-proxy cmd/kube-proxy/app/server.go
 * createClient: an empty kubeconfig means rest.InClusterConfig).
 */
export function kubeProxyConfigTemplate(model: ClusterModel, node: PlanNode): string {
  const overlay = model.overlay.vxlan !== undefined;
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: kernelspace
hostnameOverride: '${registeredName(node)}'
bindAddress: 0.0.0.0
clusterCIDR: '${podCidrV4(model)}'
winkernel:
  networkName: '${hnsNetworkName(model.overlay)}'
${overlay ? `  sourceVip: '${SOURCE_VIP_PLACEHOLDER}'\n` : ''}  enableDSR: false
`;
}

/** Flags the kubelet or kube-proxy of this version rejects, and gates locked on. */
export function forbiddenFor(kubernetes: string): string[] {
  const out = ['WinOverlay', 'WinDSR'];
  if (compareVersions(kubernetes, '1.35.0') >= 0) out.push('--pod-infra-container-image');
  return out;
}
