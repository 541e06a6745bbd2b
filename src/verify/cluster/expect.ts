// What layer 2 expects of the cluster, from the model: the Kubernetes nodes
// (every planned node but the services node) with their OS, build, taints
// and labels; the CNI's and kube-proxy's DaemonSets per OS; the
// RuntimeClasses; the probe images. Pure.
import { WINDOWS } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';

export interface ExpectedNode {
  /** As registered (kubeadm nodeRegistration.name / kubelet --hostname-override: the node name, lower case). */
  readonly name: string;
  readonly os: 'linux' | 'windows';
  readonly arch: 'amd64';
  readonly windowsBuild: string | undefined;
  /** `key=value:Effect` or `key:Effect`. */
  readonly taints: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly controlPlane: boolean;
  /** The probe image for this node's OS (and build). */
  readonly probeImage: string;
  /** RuntimeClass the probe pods use (Windows: one per build), undefined on Linux. */
  readonly runtimeClass: string | undefined;
}

/** A DaemonSet that must have a Ready pod on every node of an OS. */
export interface ExpectedDaemonSet {
  readonly probe: 'cni' | 'kube-proxy';
  readonly namespace: string;
  readonly name: string;
  readonly os: 'linux' | 'windows';
}

export interface ClusterExpectations {
  readonly nodes: readonly ExpectedNode[];
  readonly daemonSets: readonly ExpectedDaemonSet[];
  /** Where the Windows CNI and kube-proxy run as Windows services, not pods: not visible through the API. */
  readonly windowsServices: boolean;
  readonly runtimeClasses: readonly string[];
  readonly kubernetesVersion: string;
  readonly clusterDomain: string;
  /** How long the probe pods may take to start (spec.verify.podStartTimeout). */
  readonly podStartMs: number;
}

/** kubeadm's default DNS domain, which kubemix keeps (ClusterConfiguration networking.dnsDomain). */
export const CLUSTER_DOMAIN = 'cluster.local';

export function clusterExpectations(
  model: ClusterModel,
  images: Readonly<Record<string, string>> = {},
): ClusterExpectations {
  const image = (key: string): string => images[key] ?? model.probeImages[key] ?? '';
  const nodes = model.nodes
    .filter((n) => n.role !== 'services')
    .map((n): ExpectedNode => {
      const release = WINDOWS.find((w) => w.build === n.windowsBuild);
      const os = n.osFamily;
      const labels: Record<string, string> = { 'kubernetes.io/os': os, 'kubernetes.io/arch': 'amd64' };
      if (n.windowsBuild !== undefined) labels['node.kubernetes.io/windows-build'] = n.windowsBuild;
      if (n.role === 'control-plane') labels['node-role.kubernetes.io/control-plane'] = '';
      return {
        name: n.name.toLowerCase(),
        os,
        arch: 'amd64',
        windowsBuild: n.windowsBuild,
        taints: n.taints,
        labels,
        controlPlane: n.role === 'control-plane',
        probeImage: os === 'linux' ? image('linux') : image(release?.ltsc ?? ''),
        runtimeClass: os === 'windows' ? release?.os : undefined,
      };
    });
  const hasWindows = nodes.some((n) => n.os === 'windows');
  const hostProcess = model.windowsHostProcess !== undefined;
  const calico = model.cluster.cni.plugin === 'calico';
  const daemonSets: ExpectedDaemonSet[] = [
    calico
      ? { probe: 'cni', namespace: 'calico-system', name: 'calico-node', os: 'linux' }
      : { probe: 'cni', namespace: 'kube-flannel', name: 'kube-flannel-ds', os: 'linux' },
    { probe: 'kube-proxy', namespace: 'kube-system', name: 'kube-proxy', os: 'linux' },
  ];
  if (hasWindows && calico)
    daemonSets.push({ probe: 'cni', namespace: 'calico-system', name: 'calico-node-windows', os: 'windows' });
  if (hasWindows && hostProcess && !calico)
    daemonSets.push({ probe: 'cni', namespace: 'kube-flannel', name: 'kube-flannel-ds-windows', os: 'windows' });
  if (hasWindows && hostProcess)
    daemonSets.push({ probe: 'kube-proxy', namespace: 'kube-system', name: 'kube-proxy-windows', os: 'windows' });
  return {
    nodes,
    daemonSets,
    windowsServices: hasWindows && !hostProcess && !calico,
    runtimeClasses: [...new Set(nodes.flatMap((n) => (n.runtimeClass === undefined ? [] : [n.runtimeClass])))],
    kubernetesVersion: model.versions.kubernetes,
    clusterDomain: CLUSTER_DOMAIN,
    podStartMs: model.verifyPodStartSeconds * 1000,
  };
}
