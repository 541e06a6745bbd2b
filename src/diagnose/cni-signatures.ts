// Failure signatures of a pod network that runs as pods: Calico (the Tigera
// operator's calico-node, calico-node-windows, typha and kube-controllers in
// calico-system; on Windows the HNS network `Calico`, its host endpoint
// `Calico_ep` whose address kube-proxy uses as its source VIP, and
// 10-calico.conflist, all written by calico-node-windows) and HostProcess
// flannel (the pods kube-flannel-ds-windows and kube-proxy-windows on each
// Windows node). Pure: collected sections in, findings out.
import { CALICO_WINDOWS } from '../matrix/index.js';
import { CALICO_NAMESPACE, CALICO_WINDOWS_DAEMONSET } from '../render/manifests/calico.js';
import { FLANNEL_DAEMONSET, FLANNEL_NAMESPACE } from '../render/manifests/flannel.js';
import { HOSTPROCESS_DAEMONSETS } from '../render/manifests/windows-hostprocess.js';
import type { DiagnosedCluster, Finding, NodeSections } from './types.js';
import { onNode, podsOf, podUp, readTable, type Row } from './tables.js';

type Signature = (cluster: DiagnosedCluster, n: NodeSections, all: readonly NodeSections[]) => Finding[];

const get = (n: NodeSections, s: string): string => n.sections.get(s) ?? '';

/** `kubectl get pods -A -o wide` as the first control plane collected it; empty when it was not. */
export function clusterPods(all: readonly NodeSections[]): Row[] {
  return readTable(all.map((n) => get(n, 'cluster-pods')).find((t) => t !== '') ?? '');
}

/**
 * Whether the Node is Ready in `kubectl get nodes -o wide` as the first control
 * plane collected it (`Ready`, `Ready,SchedulingDisabled`); undefined when the
 * list was not collected or does not name the node.
 */
export function nodeReady(all: readonly NodeSections[], node: string): boolean | undefined {
  const table = readTable(all.map((n) => get(n, 'cluster-nodes')).find((t) => t !== '') ?? '');
  const row = table.find((r) => (r['NAME'] ?? '').toLowerCase() === node.toLowerCase());
  return row === undefined ? undefined : (row['STATUS'] ?? '').split(',')[0] === 'Ready';
}

const describe = (r: Row): string =>
  `${r['NAME'] ?? '?'} ${r['READY'] ?? '?'} ${r['STATUS'] ?? '?'}${r['RESTARTS'] ? ` restarts ${r['RESTARTS']}` : ''}`;

const CALICO_PODS = ['calico-node-', 'calico-typha-', 'calico-kube-controllers-'];

/**
 * On the node that collected the cluster's view: TigeraStatus not Available
 * or Degraded, and per node the Calico pods not Running and ready.
 */
const calicoNotReady: Signature = (cluster, n, all) => {
  if (cluster.cni.plugin !== 'calico' || !n.sections.has('cluster-pods')) return [];
  const status = readTable(get(n, 'calico-status')).filter(
    (r) => r['AVAILABLE'] === 'False' || r['DEGRADED'] === 'True',
  );
  const down = CALICO_PODS.flatMap((p) => podsOf(clusterPods([n]), CALICO_NAMESPACE, p)).filter((r) => !podUp(r));
  const byNode = new Map<string, Row[]>();
  for (const r of down) {
    const node = all.find((x) => onNode(r, x.node.name))?.node.name ?? n.node.name;
    byNode.set(node, [...(byNode.get(node) ?? []), r]);
  }
  const findings: Finding[] = [...byNode].map(([node, rows]) => ({
    id: 'calico-not-ready',
    node,
    cause: `Calico's pods on ${node} are not running and ready, so pods there get no network (or a stale one)`,
    evidence: rows.map(describe).join('; ').slice(0, 300),
    next: `read ${node}/calico-node-log.txt and ${n.node.name}/calico-log.txt in this bundle; kubectl -n ${CALICO_NAMESPACE} describe pod ${rows[0]?.['NAME'] ?? ''}`,
  }));
  if (status.length > 0)
    findings.push({
      id: 'calico-not-ready',
      node: n.node.name,
      cause: 'the Tigera operator reports Calico not available or degraded',
      evidence: status
        .map(
          (r) =>
            `tigerastatus ${r['NAME'] ?? '?'}: available ${r['AVAILABLE'] ?? '?'}, degraded ${r['DEGRADED'] ?? '?'}`,
        )
        .join('; '),
      next: `kubectl get tigerastatus ${status[0]?.['NAME'] ?? 'calico'} -o yaml names the component and its reason; kubectl -n tigera-operator logs deployment/tigera-operator`,
    });
  return findings;
};

const deleteCalicoPod = (node: string): string =>
  `kubectl -n ${CALICO_NAMESPACE} delete pod -l k8s-app=${CALICO_WINDOWS_DAEMONSET} --field-selector spec.nodeName=${node.toLowerCase()}`;

/** Calico's HNS network is there but its host endpoint is not: kube-proxy has no source VIP. */
const calicoEndpointMissing: Signature = (cluster, n) => {
  if (cluster.cni.plugin !== 'calico' || n.node.osFamily !== 'windows') return [];
  const names = (section: string): string[] => {
    try {
      const v: unknown = JSON.parse(get(n, section));
      return (Array.isArray(v) ? v : [v]).map((x) => String((x as Record<string, unknown> | null)?.['Name'] ?? ''));
    } catch {
      return [];
    }
  };
  if (!names('hns-networks').includes(CALICO_WINDOWS.network) || !n.sections.has('hns-endpoints')) return [];
  const endpoints = names('hns-endpoints');
  if (endpoints.includes(CALICO_WINDOWS.hostEndpoint)) return [];
  return [
    {
      id: 'calico-endpoint-missing',
      node: n.node.name,
      cause: `the HNS network ${CALICO_WINDOWS.network} exists but its host endpoint ${CALICO_WINDOWS.hostEndpoint} does not: kube-proxy takes its source VIP from that endpoint, so Services from pods on ${n.node.name} fail`,
      evidence: `HNS endpoints: ${endpoints.slice(0, 8).join(', ') || 'none'}`,
      next: `${deleteCalicoPod(n.node.name)} (calico-node-windows recreates ${CALICO_WINDOWS.hostEndpoint}), then delete the ${HOSTPROCESS_DAEMONSETS.kubeProxy} pod on ${n.node.name} (its launcher reads the source VIP again at start)`,
    },
  ];
};

/** calico-node-windows has not written its CNI config: the kubelet cannot start pods. */
const calicoCniConfigMissing: Signature = (cluster, n) => {
  if (cluster.cni.plugin !== 'calico' || n.node.osFamily !== 'windows') return [];
  // Get-Content's error for a missing file: "Cannot find path '…' because it does not exist."
  const line = get(n, 'cni-config')
    .split(/\r?\n/)
    .find((l) => /Cannot find path .*because it does not exist/i.test(l));
  if (line === undefined) return [];
  return [
    {
      id: 'calico-cni-config-missing',
      node: n.node.name,
      cause: `${CALICO_WINDOWS.cniConfName} is missing: calico-node-windows has not run on ${n.node.name} since it started, so the kubelet has no CNI config`,
      evidence: line.trim().slice(0, 300),
      next: `kubectl -n ${CALICO_NAMESPACE} get pods -o wide --field-selector spec.nodeName=${n.node.name.toLowerCase()}; read ${n.node.name}/calico-node-log.txt; ${deleteCalicoPod(n.node.name)}`,
    },
  ];
};

/** HostProcess flannel: the node's flannel or kube-proxy pod missing or not running (from the cluster's pod list). */
const hostProcessPodDown: Signature = (cluster, n, all) => {
  if (cluster.windowsHostProcess !== true || n.node.osFamily !== 'windows') return [];
  const pods = clusterPods(all);
  if (pods.length === 0) return [];
  const wanted: [string, string][] = [
    [FLANNEL_NAMESPACE, HOSTPROCESS_DAEMONSETS.flannel],
    ['kube-system', HOSTPROCESS_DAEMONSETS.kubeProxy],
  ];
  const problems = wanted.flatMap(([ns, ds]) => {
    const mine = podsOf(pods, ns, `${ds}-`).filter((r) => onNode(r, n.node.name));
    if (mine.length === 0) return [`no ${ns}/${ds} pod on the node`];
    return mine.filter((r) => !podUp(r)).map(describe);
  });
  if (problems.length === 0) return [];
  return [
    {
      id: 'hostprocess-pod-down',
      node: n.node.name,
      cause: `flanneld and kube-proxy run as HostProcess pods here, and one of them is not running on ${n.node.name}: pods there lose the network or Services`,
      evidence: problems.join('; ').slice(0, 300),
      next: `read ${n.node.name}/flannel-pod-log.txt and kube-proxy-pod-log.txt in this bundle; kubectl describe pod of the one named (an image without flanneld.exe or kube-proxy.exe at its root cannot start)`,
    },
  ];
};

/**
 * flannel on a Linux node: its kube-flannel-ds pod missing (a NoExecute taint
 * the DaemonSet does not tolerate, a node selector, an eviction) or not
 * running (crash-looping). Its routes and VXLAN neighbours then stop following
 * the cluster: pods there keep what they had, new nodes and pods elsewhere are
 * unreachable from them (from the cluster's pod list).
 */
const flannelPodDown: Signature = (cluster, n, all) => {
  if (cluster.cni.plugin !== 'flannel' || n.node.osFamily !== 'linux' || n.node.role === 'services') return [];
  const pods = clusterPods(all);
  if (pods.length === 0) return [];
  const mine = podsOf(pods, FLANNEL_NAMESPACE, `${FLANNEL_DAEMONSET}-`).filter(
    (r) => onNode(r, n.node.name) && !(r['NAME'] ?? '').startsWith(`${HOSTPROCESS_DAEMONSETS.flannel}-`),
  );
  const problems =
    mine.length === 0
      ? [`no ${FLANNEL_NAMESPACE}/${FLANNEL_DAEMONSET} pod on the node`]
      : mine.filter((r) => !podUp(r)).map(describe);
  if (problems.length === 0) return [];
  return [
    {
      id: 'flannel-pod-down',
      node: n.node.name,
      cause: `flanneld is not running on ${n.node.name}: its routes and VXLAN neighbours no longer follow the cluster, so pods there lose pods on nodes and addresses that changed since`,
      evidence: problems.join('; ').slice(0, 300),
      next:
        mine.length === 0
          ? `kubectl -n ${FLANNEL_NAMESPACE} get daemonset ${FLANNEL_DAEMONSET} (DESIRED below the Linux node count?) and kubectl describe node ${n.node.name}: a NoExecute taint or a label the DaemonSet does not tolerate or select keeps it off; remove it and the DaemonSet starts flanneld there again`
          : `kubectl -n ${FLANNEL_NAMESPACE} logs ${mine[0]?.['NAME'] ?? FLANNEL_DAEMONSET} --previous (cluster-pods and flannel-log in this bundle): why flanneld exits; it is restarted by its DaemonSet once the cause is gone`,
    },
  ];
};

export const CNI_SIGNATURES: readonly Signature[] = [
  flannelPodDown,
  calicoNotReady,
  calicoEndpointMissing,
  calicoCniConfigMissing,
  hostProcessPodDown,
];

/** HostProcess flannel: whether the node's kube-proxy pod runs (undefined: the cluster's pod list was not collected). */
export function hostProcessKubeProxyUp(all: readonly NodeSections[], node: string): boolean | undefined {
  const pods = clusterPods(all);
  if (pods.length === 0) return undefined;
  return podsOf(pods, 'kube-system', `${HOSTPROCESS_DAEMONSETS.kubeProxy}-`).some((r) => onNode(r, node) && podUp(r));
}
