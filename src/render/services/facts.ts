// The facts every services-node file is rendered from: who is behind the load
// balancer, the DNS zones, the registry name. One place so HAProxy, Bind and
// dnsmasq can never disagree about an address.
import { driverFor } from '../../drivers/index.js';
import { SERVICES } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { parseCidr, parseIp } from '../../net/cidr.js';
import type { PlanNode } from '../../model/types.js';

export interface ServicesFacts {
  readonly node: PlanNode;
  /** `<cluster>.<domain>`: the forward zone, and every node's FQDN suffix. */
  readonly zone: string;
  /** `0.0.10.in-addr.arpa` for 10.0.0.0/24 (widened to an octet boundary). */
  readonly reverseZone: string;
  /** Octets of the reverse zone's network, most significant first. */
  readonly reverseOctets: number;
  readonly controllers: readonly PlanNode[];
  /** Where 80/443 go: the Linux workers, or the controllers when there are none. */
  readonly ingress: readonly PlanNode[];
  /** Every cluster node but the services node, in model order. */
  readonly members: readonly PlanNode[];
  /** Nodes with a MAC (services node included), in model order: dnsmasq's reservations. */
  readonly dhcpClients: readonly PlanNode[];
  readonly registryHost: string;
  readonly registryEndpoint: string;
  readonly gateway: string;
  readonly nodeCidr: string;
  readonly toggles: {
    readonly dns: boolean;
    readonly loadBalancer: boolean;
    readonly dhcp: boolean;
    readonly registry: boolean;
  };
  /** Bind's upstream resolvers; undefined means the gateway. */
  readonly forwarders: readonly string[] | undefined;
  /** spec.kubernetes.controlPlaneProbes: HAProxy's checks of the API servers get the same slack. */
  readonly apiProbes: { readonly timeoutSeconds?: number; readonly livenessFailureThreshold?: number } | undefined;
}

// Per-node renderers ask for the facts once per node: computed once per model,
// or planning would scan every node once for each node.
const cache = new WeakMap<ClusterModel, ServicesFacts | undefined>();

/** undefined when the cluster has no services node. */
export function servicesFacts(model: ClusterModel): ServicesFacts | undefined {
  if (cache.has(model)) return cache.get(model);
  const facts = computeFacts(model);
  cache.set(model, facts);
  return facts;
}

function computeFacts(model: ClusterModel): ServicesFacts | undefined {
  const node = model.nodes.find((n) => n.role === 'services');
  const s = model.services;
  if (node === undefined || s === undefined) return undefined;
  const zone = `${model.cluster.name}.${model.cluster.domain}`;
  const controllers = model.nodes.filter((n) => n.role === 'control-plane');
  // Ingress controllers are Linux pods: Windows workers are tainted for them.
  const workers = model.nodes.filter((n) => n.role === 'worker' && n.osFamily === 'linux');
  const { name, octets } = reverseZoneOf(model.cluster.network.nodeCidr);
  return {
    node,
    zone,
    reverseZone: name,
    reverseOctets: octets,
    controllers,
    ingress: workers.length > 0 ? workers : controllers,
    members: model.nodes.filter((n) => n.role !== 'services'),
    dhcpClients: model.nodes.filter((n) => n.mac !== undefined),
    registryHost: `registry.${zone}`,
    registryEndpoint: `registry.${zone}:${SERVICES.registryPort}`,
    gateway: model.cluster.network.gateway,
    nodeCidr: model.cluster.network.nodeCidr,
    // dnsmasq only hands out reserved leases to existing hosts with a MAC. For VMs the driver
    // creates, the driver's network answers DHCP (libvirt's dnsmasq, which must hand out the
    // services node's own address before it runs): one DHCP server per segment.
    apiProbes: model.kubeadm.controlPlaneProbes,
    toggles: {
      dns: s.dns,
      loadBalancer: s.loadBalancer,
      dhcp: s.dhcp && !driverFor(model.cluster.driver).createsMachines && model.nodes.some((n) => n.mac !== undefined),
      registry: s.registry,
    },
    forwarders: s.forwarders,
  };
}

/** The in-addr.arpa zone covering an IPv4 network, rounded out to whole octets. */
export function reverseZoneOf(cidr: string): { name: string; octets: number } {
  const net = parseCidr(cidr);
  if (net === undefined || net.family !== 4) throw new Error(`reverse zone needs an IPv4 network, got ${cidr}`);
  const octets = Math.max(1, Math.floor(net.prefix / 8));
  const bytes = octetsOf(net.base).slice(0, octets).reverse();
  return { name: `${bytes.join('.')}.in-addr.arpa`, octets };
}

/** The PTR owner name of `ip` relative to a reverse zone of `octets` network octets. */
export function ptrLabel(ip: string, octets: number): string {
  const value = parseIp(ip)?.value ?? 0n;
  return octetsOf(value).slice(octets).reverse().join('.');
}

function octetsOf(value: bigint): number[] {
  return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn));
}
