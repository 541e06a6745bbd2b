// Every inbound flow the cluster needs toward each node, with who needs it
// and where that is written down: kubemix's own probes (taken from verify's
// underlay plan itself, so the two cannot drift), Kubernetes' ports
// (kubernetes.io "Ports and Protocols"), the pod network per CNI, and the
// services node's DNS, DHCP, registry, download cache and API load balancer.
// Pure.
import { CALICO, SERVICES } from '../matrix/index.js';
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import { planUnderlay, underlayInput, type Probe } from '../verify/underlay/plan.js';
import type { Protocol } from './firewall.js';

export interface FlowSource {
  /** How the sources read in a report: `every other node`, `control planes`, `anywhere`. */
  readonly label: string;
  /** Their addresses (IPs or CIDRs); `any` for anywhere. */
  readonly addresses: readonly string[] | 'any';
}

export interface Flow {
  /** The node the flow arrives at. */
  readonly to: string;
  readonly protocol: Protocol;
  /** Local port or range (`6443`, `30000-32767`); undefined for ICMP and for any port. */
  readonly port?: string;
  /** ICMP type (8: echo request). */
  readonly icmpType?: string;
  readonly from: FlowSource;
  /** What needs it. */
  readonly why: string;
  /** Where the need is written down. */
  readonly source: string;
  /**
   * When it is needed first: `before-install` (task-run-validations probes
   * every node before node prep has opened anything) or `installed`.
   */
  readonly phase: 'before-install' | 'installed';
}

const PORTS_DOC = 'kubernetes.io/docs/reference/networking/ports-and-protocols';
const VERIFY = 'kubemix src/verify/underlay/plan.ts';

const sources = (label: string, nodes: readonly PlanNode[]): FlowSource => ({
  label,
  addresses: nodes.map((n) => n.ip).sort(),
});

interface ProbeGroup {
  readonly to: string;
  readonly protocol: Protocol;
  readonly port?: string;
  readonly icmpType?: string;
  readonly why: string;
  readonly phase: Flow['phase'];
  readonly from: Set<string>;
}

/**
 * kubemix's probes: verify's underlay plan (task-run-validations runs its
 * ping and MTU probes before node prep; the UDP and TCP probes run once the
 * node is prepared), grouped by target, protocol and port.
 */
function probeFlows(model: ClusterModel): Flow[] {
  const byName = new Map(model.nodes.map((n) => [n.name, n] as const));
  const services = model.nodes.find((n) => n.role === 'services');
  const groups = new Map<string, ProbeGroup>();
  const add = (p: Probe, g: Omit<ProbeGroup, 'to' | 'from'>): void => {
    const to = p.target === 'api-lb' ? services : byName.get(p.target);
    if (to === undefined) return;
    const key = [to.name, g.protocol, g.port ?? '', g.icmpType ?? ''].join('|');
    const group = groups.get(key) ?? { ...g, to: to.name, from: new Set<string>() };
    group.from.add(p.source.address);
    groups.set(key, group);
  };
  const before = planUnderlay(underlayInput(model, false));
  const after = planUnderlay(underlayInput(model, true));
  for (const p of before.probes)
    if (p.expect.kind === 'ping' || p.expect.kind === 'mtu')
      add(p, {
        protocol: 'icmpv4',
        icmpType: '8',
        why: 'kubemix ping and MTU probes (task-run-validations before node prep; verify, upgrade and patch node checks)',
        phase: 'before-install',
      });
  for (const g of before.udp)
    for (const p of g.senders)
      add(p, {
        protocol: 'udp',
        port: String(g.port),
        why: "verify's UDP probe to the VXLAN port",
        phase: 'installed',
      });
  for (const p of after.probes)
    if (p.expect.kind === 'tcp')
      add(p, {
        protocol: 'tcp',
        port: String(p.expect.port),
        why: "verify's TCP probe (API server, kubelet)",
        phase: 'installed',
      });
  return [...groups.values()].map(({ from, ...g }) => ({
    ...g,
    from: { label: 'the other nodes', addresses: [...from].sort() },
    source: VERIFY,
  }));
}

/** Kubernetes' own ports and the CNI's, between cluster nodes. */
function clusterFlows(model: ClusterModel): Flow[] {
  const k8s = model.nodes.filter((n) => n.role !== 'services');
  const cps = k8s.filter((n) => n.role === 'control-plane');
  const services = model.nodes.find((n) => n.role === 'services');
  const lb = services !== undefined && model.services?.loadBalancer === true ? [services] : [];
  const out: Flow[] = [];
  for (const cp of cps) {
    out.push({
      to: cp.name,
      protocol: 'tcp',
      port: String(model.cluster.apiEndpoint.port),
      from: sources(lb.length > 0 ? 'cluster nodes and the load balancer' : 'cluster nodes', [...k8s, ...lb]),
      why: 'kube-apiserver (kubelets, kube-proxy, the CNI, the load balancer)',
      source: PORTS_DOC,
      phase: 'installed',
    });
    if (cps.length > 1)
      out.push({
        to: cp.name,
        protocol: 'tcp',
        port: '2379-2380',
        from: sources(
          'the other control planes',
          cps.filter((c) => c !== cp),
        ),
        why: 'etcd client and peer',
        source: PORTS_DOC,
        phase: 'installed',
      });
  }
  for (const n of k8s) {
    out.push({
      to: n.name,
      protocol: 'tcp',
      port: '10250',
      from: sources('control planes', cps),
      why: 'API server → kubelet (logs, exec, port-forward)',
      source: PORTS_DOC,
      phase: 'installed',
    });
    out.push({
      to: n.name,
      protocol: 'tcp',
      port: '30000-32767',
      from: { label: 'anywhere', addresses: 'any' },
      why: 'NodePort Services',
      source: PORTS_DOC,
      phase: 'installed',
    });
    const others = k8s.filter((o) => o !== n);
    const vxlan = model.overlay.vxlan;
    if (vxlan !== undefined && others.length > 0)
      out.push({
        to: n.name,
        protocol: 'udp',
        port: String(vxlan.port),
        from: sources('the other cluster nodes', others),
        why: `pod network: ${model.overlay.plugin} VXLAN (VNI ${vxlan.vni})`,
        source:
          model.overlay.plugin === 'calico'
            ? 'docs.tigera.io calico/latest/getting-started/kubernetes/requirements (VXLAN UDP 4789)'
            : 'flannel-io/flannel Documentation/backends.md (vxlan Port)',
        phase: 'installed',
      });
    if (model.overlay.plugin === 'calico' && n.osFamily === 'linux')
      out.push({
        to: n.name,
        protocol: 'tcp',
        port: String(CALICO.typhaPort),
        from: sources('the other cluster nodes', others),
        why: 'Calico Typha (the operator may place it on any Linux node)',
        source: 'docs.tigera.io calico/latest/getting-started/kubernetes/requirements (Typha TCP 5473)',
        phase: 'installed',
      });
    if (vxlan === undefined && n.osFamily === 'linux')
      out.push({
        to: n.name,
        protocol: 'any',
        from: { label: 'the pod network', addresses: [...model.podNetworks.all] },
        why: 'pod network: host-gw routes pods through the node (forwarded traffic)',
        source: 'flannel-io/flannel Documentation/backends.md (host-gw)',
        phase: 'installed',
      });
  }
  return out;
}

/** The services node serves every node: DNS, DHCP, the registry, the download cache, the API load balancer. */
function servicesFlows(model: ClusterModel): Flow[] {
  const svc = model.nodes.find((n) => n.role === 'services');
  const s = model.services;
  if (svc === undefined || s === undefined) return [];
  const k8s = model.nodes.filter((n) => n.role !== 'services');
  const all = sources('cluster nodes', k8s);
  const flow = (protocol: Protocol, port: string, why: string, from: FlowSource = all): Flow => ({
    to: svc.name,
    protocol,
    port,
    from,
    why,
    source: 'kubemix src/render/services',
    phase: 'installed',
  });
  return [
    ...(s.loadBalancer
      ? [flow('tcp', String(model.cluster.apiEndpoint.port), 'HAProxy in front of the API servers')]
      : []),
    ...(s.dns
      ? [flow('udp', '53', 'Bind (cluster names)'), flow('tcp', '53', 'Bind (cluster names, large answers)')]
      : []),
    ...(s.dhcp
      ? [flow('udp', '67', 'dnsmasq DHCP', { label: 'the node network', addresses: [model.cluster.network.nodeCidr] })]
      : []),
    ...(s.registry ? [flow('tcp', String(SERVICES.registryPort), 'the services registry')] : []),
    flow('tcp', String(SERVICES.filesPort), 'the download cache (nginx, HTTPS)'),
  ];
}

/**
 * SSH from the deployer. libvirt guests are reached through their hypervisor
 * (ProxyJump), whose address on the node network is the gateway; an existing
 * host's SSH is a prerequisite kubemix already used (no flow is decided).
 */
function sshFlows(model: ClusterModel): Flow[] {
  if (model.cluster.driver !== 'libvirt') return [];
  return model.nodes.map((n) => ({
    to: n.name,
    protocol: 'tcp',
    port: '22',
    from: { label: 'the deployer through the hypervisor', addresses: [model.cluster.network.gateway] },
    why: 'kubemix over SSH (ProxyJump through the hypervisor)',
    source: 'kubemix docs/libvirt.md',
    phase: 'before-install' as const,
  }));
}

export function neededFlows(model: ClusterModel): Flow[] {
  return [...sshFlows(model), ...probeFlows(model), ...clusterFlows(model), ...servicesFlows(model)];
}
