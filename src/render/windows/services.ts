// Service definitions for flanneld (under WinSW: it has no Windows service
// integration of its own) and kube-proxy (kernelspace, via kube-log-runner).
import { compareVersions } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { registeredName, logRunner } from './kubeadm.js';
import { hnsNetworkName, podCidrV4 } from './network.js';
import { SOURCE_VIP_PLACEHOLDER, WIN } from './paths.js';
import { tokenKubeconfig } from './token.js';
import { xmlEscape } from '../../util/escape/index.js';

const xml = xmlEscape;

/**
 * flanneld's flags. `kubeconfig` is the service's own (a ServiceAccount token
 * file); a HostProcess pod passes none and uses its projected token.
 * Never the kubelet's kubeconfig: flannel lists and watches every Node,
 * which the Node authorizer denies a node (AuthorizeNodeWithSelectors).
 */
export function flanneldArgs(node: Pick<PlanNode, 'ip'>, kubeconfig?: string): string[] {
  // No --ip-masq: on Windows masquerading is the CNI delegate's OutBoundNAT.
  return [
    '--kube-subnet-mgr',
    ...(kubeconfig === undefined ? [] : [`--kubeconfig-file=${kubeconfig}`]),
    `--iface=${node.ip}`,
    `--net-config-path=${WIN.flannelNetConf}`,
    `--subnet-file=${WIN.subnetEnv}`,
  ];
}

/** WinSW v2 configuration; it sits beside the renamed wrapper as flanneld-service.xml. */
export function flanneldServiceXml(node: PlanNode): string {
  return `<service>
  <id>flanneld</id>
  <name>flanneld</name>
  <description>flannel for kubemix (WinSW wrapper)</description>
  <executable>${xml(`${WIN.bin}\\flanneld.exe`)}</executable>
  <arguments>${xml(flanneldArgs(node, WIN.flanneldKubeconfig).join(' '))}</arguments>
  <env name="NODE_NAME" value="${xml(registeredName(node))}"/>
  <startmode>Manual</startmode>
  <logpath>${xml(`${WIN.logs}\\flanneld`)}</logpath>
  <log mode="roll-by-size">
    <sizeThreshold>10240</sizeThreshold>
    <keepFiles>8</keepFiles>
  </log>
  <onfailure action="restart" delay="10 sec"/>
  <onfailure action="restart" delay="30 sec"/>
  <resetfailure>1 hour</resetfailure>
</service>
`;
}

/**
 * KubeProxyConfiguration with the source VIP left as a placeholder: the VIP
 * is reserved on the node at run time, after flanneld made the network.
 */
export function kubeProxyConfigTemplate(model: ClusterModel, node: PlanNode): string {
  const overlay = model.overlay.vxlan !== undefined;
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: kernelspace
hostnameOverride: '${registeredName(node)}'
bindAddress: 0.0.0.0
clusterCIDR: '${podCidrV4(model)}'
clientConnection:
  kubeconfig: '${WIN.kubeProxyKubeconfig}'
winkernel:
  networkName: '${hnsNetworkName(model.overlay)}'
${overlay ? `  sourceVip: '${SOURCE_VIP_PLACEHOLDER}'\n` : ''}  enableDSR: false
`;
}

export function kubeProxyCommandLine(): string {
  return logRunner('kube-proxy', [`--config=${WIN.kubeProxyConfig}`, '--windows-service']);
}

/**
 * kube-proxy's kubeconfig. The ServiceAccount token lives in its own private
 * file (`tokenFile`, re-read by client-go every minute) so that a newer token
 * needs no restart; the kubeconfig itself holds no secret.
 */
export function kubeProxyKubeconfig(model: ClusterModel): string {
  return tokenKubeconfig(model, 'kube-proxy', WIN.kubeProxyToken);
}

/** flanneld's (service mode): the flannel-windows ServiceAccount's token file. */
export function flanneldKubeconfig(model: ClusterModel): string {
  return tokenKubeconfig(model, 'flannel-windows', WIN.flanneldToken);
}

/** Flags the kubelet or kube-proxy of this version rejects, and gates locked on. */
export function forbiddenFor(kubernetes: string): string[] {
  const out = ['WinOverlay', 'WinDSR'];
  if (compareVersions(kubernetes, '1.35.0') >= 0) out.push('--pod-infra-container-image');
  return out;
}
