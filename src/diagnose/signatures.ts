// Known failure signatures of mixed clusters, matched against what
// `diagnose` collected: each names the node, the likely cause, the evidence
// line and a next step. Pure: sections in, findings out.
import { hnsNetworkName } from '../render/windows/network.js';
import { HOSTPROCESS_DAEMONSETS } from '../render/manifests/windows-hostprocess.js';
import { FLANNEL_NAMESPACE } from '../render/manifests/flannel.js';
import { vxlanOf } from '../model/settings.js';
import { CNI_SIGNATURES, hostProcessKubeProxyUp, nodeReady } from './cni-signatures.js';
import type { DiagnosedCluster, Finding, NodeSections } from './types.js';
import { OWN_NODE_POLICY, WINDOWS_FLANNEL_SA } from '../render/manifests/windows.js';
import { duration, judgeCredentials, readCredentialLines, RENEWAL } from '../verify/underlay/credentials.js';

export type { DiagnosedCluster, Finding, NodeSections } from './types.js';

type Signature = (cluster: DiagnosedCluster, n: NodeSections, all: readonly NodeSections[]) => Finding[];

const get = (n: NodeSections, s: string): string => n.sections.get(s) ?? '';

/** Windows services by name → status, from `<name> <Status>` lines. */
function windowsServices(n: NodeSections): Map<string, string> {
  return new Map(
    get(n, 'services')
      .split(/\r?\n/)
      .map((l) => l.trim().split(/\s+/))
      .filter((p) => p.length === 2)
      .map(([a, b]) => [a ?? '', b ?? '']),
  );
}

function jsonList(text: string): Record<string, unknown>[] {
  try {
    const v: unknown = JSON.parse(text);
    return (Array.isArray(v) ? v : [v]).filter(
      (x): x is Record<string, unknown> => typeof x === 'object' && x !== null,
    );
  } catch {
    return [];
  }
}

/** The newest update in the hotfix section (`KB5040437 Security Update 2024-07-09`). */
function newestUpdate(n: NodeSections): string | undefined {
  return get(n, 'hotfixes')
    .split(/\r?\n/)
    .find((l) => /^KB\d+/.test(l.trim()))
    ?.trim();
}

const networkMissing: Signature = (cluster, n) => {
  if (n.node.osFamily !== 'windows' || !n.sections.has('hns-networks')) return [];
  const want = hnsNetworkName({ plugin: cluster.cni.plugin, vxlan: vxlanOf(cluster.cni) });
  // flanneld (a service) recreates flannel's network; calico-node-windows (a pod) recreates Calico's.
  const restart =
    cluster.cni.plugin === 'calico'
      ? `Delete the calico-node-windows pod on ${n.node.name} (kubectl -n calico-system delete pod --field-selector spec.nodeName=${n.node.name.toLowerCase()}; the operator's DaemonSet recreates it and it rebuilds ${want})`
      : cluster.windowsHostProcess === true
        ? `Delete the flannel HostProcess pod on ${n.node.name} (kubectl -n ${FLANNEL_NAMESPACE} delete pod -l app=${HOSTPROCESS_DAEMONSETS.flannel} --field-selector spec.nodeName=${n.node.name.toLowerCase()}; its DaemonSet recreates it and flanneld rebuilds ${want})`
        : `Restart-Service flanneld on ${n.node.name} (it recreates ${want})`;
  const names = jsonList(get(n, 'hns-networks')).map((x) => String(x['Name'] ?? ''));
  if (names.includes(want)) return [];
  const update = newestUpdate(n);
  const kb = update?.match(/^KB(\d+)/)?.[1];
  return [
    {
      id: 'hns-network-missing',
      node: n.node.name,
      cause:
        `the pod network's HNS network ${want} does not exist, so no pod on ${n.node.name} has networking` +
        (update === undefined
          ? ''
          : `; the newest Windows update is ${update}: networks lost after a monthly update match a known regression`),
      evidence: `HNS networks: ${names.join(', ') || 'none'}`,
      next:
        `${restart}, then check Get-HnsNetwork` +
        (kb === undefined
          ? ''
          : `; if it does not come back, roll the update back: wusa /uninstall /kb:${kb} /quiet /norestart, then reboot`),
      ...(update === undefined ? {} : { reference: 'microsoft/Windows-Containers#516' }),
    },
  ];
};

/** ClusterIPs from `kubectl get services -A -o wide` (NAMESPACE NAME TYPE CLUSTER-IP …). */
function clusterIps(all: readonly NodeSections[]): string[] {
  const text = all.map((n) => get(n, 'cluster-services')).find((t) => t !== '') ?? '';
  return text
    .split(/\r?\n/)
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[3] ?? '')
    .filter((ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip));
}

/** kube-proxy runs on the Windows node: its service, or with HostProcess flannel its pod. */
function kubeProxyRuns(cluster: DiagnosedCluster, n: NodeSections, all: readonly NodeSections[]): boolean {
  if (cluster.windowsHostProcess === true) return hostProcessKubeProxyUp(all, n.node.name) === true;
  return windowsServices(n).get('kube-proxy') === 'Running';
}

const loadBalancerMissing: Signature = (cluster, n, all) => {
  if (n.node.osFamily !== 'windows' || !kubeProxyRuns(cluster, n, all)) return [];
  const hns = `${get(n, 'hns-policylists')}\n${get(n, 'hns-loadbalancers')}`;
  if (!n.sections.has('hns-policylists') && !n.sections.has('hns-loadbalancers')) return [];
  const missing = clusterIps(all).filter(
    (ip) => !new RegExp(`(^|[^0-9.])${ip.replace(/\./g, '\\.')}([^0-9.]|$)`).test(hns),
  );
  if (missing.length === 0) return [];
  return [
    {
      id: 'hns-lb-missing',
      node: n.node.name,
      cause: `kube-proxy runs but ${missing.length} Service(s) have no HNS load balancer on ${n.node.name}; kube-proxy does not recreate load balancers removed behind its back (e.g. by a restart of HNS, the CNI or the kubelet)`,
      evidence: `no load balancer for ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
      next: `${cluster.windowsHostProcess === true ? `delete the ${HOSTPROCESS_DAEMONSETS.kubeProxy} pod on ${n.node.name}` : `Restart-Service kube-proxy on ${n.node.name}`} (it rebuilds every load balancer from scratch), then hnsdiag list loadbalancers`,
      reference: 'kubernetes/kubernetes#135802',
    },
  ];
};

const flannelForbidden: Signature = (_cluster, n) => {
  const line = `${get(n, 'flanneld-log')}\n${get(n, 'flannel-log')}\n${get(n, 'flannel-pod-log')}`
    .split(/\r?\n/)
    .find((l) => /forbidden/i.test(l) && /\bnodes?\b/.test(l));
  if (line === undefined) return [];
  return [
    {
      id: 'flanneld-forbidden',
      node: n.node.name,
      cause: `flanneld's identity may not read or patch Node objects: its RBAC (ClusterRole flannel, bound to flannel and ${WINDOWS_FLANNEL_SA}) is missing, its pod's token was refused (expired: the credentials section), or on Windows the admission policy ${OWN_NODE_POLICY} refused a write to another node than its pod's`,
      evidence: line.trim().slice(0, 300),
      next: `kubectl get clusterrolebinding flannel -o yaml; \`kubemix up SPEC\` re-applies the flannel RBAC and the policy; deleting flannel's pod on ${n.node.name} gives it a new token`,
    },
  ];
};

const vxlanMismatch: Signature = (cluster, n) => {
  if (cluster.cni.backend !== 'vxlan') return [];
  const want = `VNI ${cluster.cni.vni}, port ${cluster.cni.port}`;
  const link = get(n, 'vxlan-link').match(/vxlan id (\d+).*?dstport (\d+)/s);
  const conf = jsonList(get(n, 'net-conf'))[0]?.['Backend'] as Record<string, unknown> | undefined;
  const seen =
    link !== null
      ? { vni: Number(link[1]), port: Number(link[2]), where: 'ip -d link' }
      : conf !== undefined
        ? { vni: Number(conf['VNI'] ?? NaN), port: Number(conf['Port'] ?? NaN), where: 'net-conf.json' }
        : undefined;
  if (seen === undefined || (seen.vni === cluster.cni.vni && seen.port === cluster.cni.port)) return [];
  return [
    {
      id: 'vxlan-mismatch',
      node: n.node.name,
      cause: `the node's VXLAN settings differ from the cluster's (${want}): pods on it cannot reach pods on other nodes (Windows requires VNI 4096 and port 4789)`,
      evidence: `${seen.where}: VNI ${seen.vni}, port ${seen.port}`,
      next:
        cluster.cni.plugin === 'calico'
          ? 'put the cluster values back in FelixConfiguration default (vxlanVNI, vxlanPort), then delete the calico-node pod on the node'
          : 'put the cluster values back (the flannel ConfigMap net-conf.json and this node), then restart flanneld on it',
    },
  ];
};

const subnetEnvStale: Signature = (cluster, n) => {
  const env = new Map(
    get(n, 'subnet-env')
      .split(/\r?\n/)
      .map((l) => l.trim().split('='))
      .filter((p) => p.length === 2)
      .map(([k, v]) => [k ?? '', v ?? '']),
  );
  const network = env.get('FLANNEL_NETWORK');
  const pod = cluster.network.podCidr.split(',')[0]?.trim();
  const problems = [
    ...(network !== undefined && network !== pod
      ? [`FLANNEL_NETWORK=${network}, the cluster's pod CIDR is ${pod}`]
      : []),
    ...(n.node.osFamily === 'linux' &&
    env.has('FLANNEL_MTU') &&
    Number(env.get('FLANNEL_MTU')) !== cluster.network.podMtu
      ? [`FLANNEL_MTU=${env.get('FLANNEL_MTU')}, the cluster's pod MTU is ${cluster.network.podMtu}`]
      : []),
  ];
  if (problems.length === 0) return [];
  return [
    {
      id: 'subnet-env-stale',
      node: n.node.name,
      cause: "flannel's subnet.env is stale: it was written for another network or MTU",
      evidence: problems.join('; '),
      next: 'remove /run/flannel/subnet.env (C:\\run\\flannel\\subnet.env on Windows) and restart flannel on the node',
    },
  ];
};

/** The Windows start order to name: calico-node-windows, and with flannel the flanneld and kube-proxy pods, are the kubelet's. */
function windowsStartOrder(cluster: DiagnosedCluster): string {
  if (cluster.cni.plugin === 'calico')
    return 'containerd, kubelet (it runs calico-node-windows), kube-proxy once the HNS network Calico exists';
  return cluster.windowsHostProcess === true
    ? 'containerd, kubelet (it runs the flannel and kube-proxy HostProcess pods)'
    : 'containerd, flanneld, kubelet, kube-proxy';
}

const serviceDown: Signature = (cluster, n) => {
  if (n.node.role === 'services') return [];
  const down =
    n.node.osFamily === 'windows'
      ? [...windowsServices(n)].filter(([, s]) => s !== 'Running').map(([name, s]) => `${name} ${s}`)
      : get(n, 'services')
          .split(/\r?\n/)
          .map((s, i) => [['kubelet', 'containerd'][i] ?? '', s.trim()])
          .filter(([name, s]) => name !== '' && s !== '' && s !== 'active')
          .map(([name, s]) => `${name} ${s}`);
  if (down.length === 0) return [];
  return [
    {
      id: 'service-down',
      node: n.node.name,
      cause: `services not running on ${n.node.name}`,
      evidence: down.join(', '),
      next: `read their logs in this bundle (${n.node.name}/*-log.txt) and start them in order: ${n.node.osFamily === 'windows' ? windowsStartOrder(cluster) : 'containerd, kubelet'}`,
    },
  ];
};

const cniNotReady: Signature = (cluster, n, all) => {
  // The kubelet's log keeps the lines of its start, before the pod network came up (the real-cluster tier's
  // run 40 named a healthy control plane from a line 20 minutes old): a Ready Node has a network now, since
  // the kubelet reports NotReady while its runtime's network is not ready.
  if (nodeReady(all, n.node.name) === true) return [];
  const line = get(n, 'kubelet-log')
    .split(/\r?\n/)
    .find((l) => /cni plugin not initialized|NetworkPluginNotReady|no networks found in \/etc\/cni\/net\.d/i.test(l));
  if (line === undefined) return [];
  return [
    {
      id: 'cni-not-ready',
      node: n.node.name,
      cause: 'the kubelet finds no working CNI configuration, so the node stays NotReady for pods',
      evidence: line.trim().slice(0, 300),
      next:
        cluster.cni.plugin === 'calico'
          ? "check the node's cni-config section and that the calico-node (Linux) or calico-node-windows (Windows) pod runs on it (kubectl -n calico-system get pods -o wide)"
          : cluster.windowsHostProcess === true
            ? `check the node's cni-config section and that the flannel pod runs on it (Windows: the HostProcess pod of DaemonSet ${FLANNEL_NAMESPACE}/${HOSTPROCESS_DAEMONSETS.flannel}, whose log is flannel-pod-log)`
            : "check the node's cni-config section and that the flannel pod (Linux) or flanneld service (Windows) runs on it",
    },
  ];
};

/** The services node: a service kubemix switched on not active, or its own config test failing. */
const servicesFault: Signature = (_cluster, n) => {
  if (n.node.role !== 'services') return [];
  const down = get(n, 'service-states')
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/))
    .filter((p) => p.length === 2 && p[1] !== 'active')
    .map((p) => p.join(' '));
  const failing = ['haproxy-check', 'named-check', 'dnsmasq-check'].filter((c) => {
    const code = /exit (\d+)\s*$/.exec(get(n, c))?.[1];
    return code !== undefined && code !== '0';
  });
  const findings: Finding[] = [];
  if (down.length > 0)
    findings.push({
      id: 'services-down',
      node: n.node.name,
      cause: `services the cluster depends on are not running on ${n.node.name} (API endpoint, DNS, registry or DHCP)`,
      evidence: down.join(', '),
      next: `read ${n.node.name}/<service>-log.txt in this bundle; \`kubemix up\` re-renders and restarts them`,
    });
  for (const c of failing)
    findings.push({
      id: 'services-config-invalid',
      node: n.node.name,
      cause: `${c.replace(/-check$/, '')}'s own config test fails: the service will not (re)start with this config`,
      evidence: get(n, c).split(/\r?\n/).slice(-4).join(' | ').slice(0, 300),
      next: `read ${n.node.name}/${c}.txt; re-render with \`kubemix up\` instead of editing the file by hand`,
    });
  return findings;
};

/** A credential on the node has expired or is inside its warning window (verify's credentials probe, the same judgement). */
const credentialExpiry: Signature = (_cluster, n) => {
  if (!n.sections.has('credentials')) return [];
  const j = judgeCredentials(readCredentialLines(get(n, 'credentials')));
  const findings: Finding[] = [];
  if (j.expired.length > 0)
    findings.push({
      id: 'credential-expired',
      node: n.node.name,
      cause: `a credential the node's components run with has expired: ${j.expired.map((c) => `${c.name} (${c.kind})`).join(', ')}`,
      evidence: j.expired.map((c) => `${c.name} expired ${duration(c.remainingSeconds)} ago`).join('; '),
      next: [...new Set(j.expired.map((c) => RENEWAL[c.kind]))].join('; '),
    });
  if (j.warnings.length > 0)
    findings.push({
      id: 'credential-expiring',
      node: n.node.name,
      cause: 'a credential on the node is close to its end and has not been renewed, or could not be read',
      evidence: j.warnings.join('; ').slice(0, 300),
      next: j.advice.join('; '),
    });
  return findings;
};

const SIGNATURES: readonly Signature[] = [
  servicesFault,
  serviceDown,
  networkMissing,
  loadBalancerMissing,
  flannelForbidden,
  vxlanMismatch,
  subnetEnvStale,
  cniNotReady,
  credentialExpiry,
  ...CNI_SIGNATURES,
];

export function matchSignatures(cluster: DiagnosedCluster, nodes: readonly NodeSections[]): Finding[] {
  return nodes.flatMap((n) => SIGNATURES.flatMap((s) => s(cluster, n, nodes)));
}
