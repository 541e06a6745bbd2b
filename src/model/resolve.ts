// resolveModel: a validated spec → every concrete fact the plan needs
// (addresses, MACs, placement, versions, MTUs, endpoints). Pure and
// deterministic: the same spec always resolves to the same model.
import { IMAGES, VERIFY_POD_START_SECONDS, VERIFY_PROBE_IMAGES, windowsRelease } from '../matrix/index.js';
import { formatCidr, formatIp, parseCidr, subnetAt, type Cidr } from '../net/cidr.js';
import type {
  AddressRanges,
  HostConnection,
  HttpProxy,
  Hypervisor,
  Mirrors,
  NodeRole,
  PlanCluster,
  PlanNode,
  PodOverlay,
  ServicesSettings,
  WindowsHostProcess,
} from './types.js';
import { driverFor } from '../drivers/index.js';
import { addressRanges, resolveMirrors, resolveOverlay, resolveProxy, resolveServices } from './settings.js';
import type { NodeDraft } from '../spec/nodes.js';
import { NODE_POD_PREFIX } from '../spec/rules/network.js';
import type { SpecResult } from '../spec/read.js';
import type { ClusterSpec, KubeadmSettings } from '../spec/types.js';
import { allocateAddresses, gatewayOf } from '../net/addresses.js';
import { assignMacs } from './mac.js';
import { splitUrlCredentials, type UrlSecrets } from './url-credentials.js';
import { nodeMtu, podMtu } from '../net/mtu.js';
import { mtuSettings } from '../spec/mtu.js';
import { controlPlaneSpread, placeOnHypervisors } from './placement.js';
import { resolveVersions, type ResolvedVersions } from './versions.js';

export const WINDOWS_TAINT = 'os=windows:NoSchedule';
export const CONTROL_PLANE_TAINT = 'node-role.kubernetes.io/control-plane:NoSchedule';
export const API_PORT = 6443;

export interface ModelWarning {
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

export interface ClusterModel {
  /** The validated spec, for the CLI; later steps read the resolved fields below. */
  readonly spec: ClusterSpec;
  /** The facts a plan carries in its header (serialised into plan.json). */
  readonly cluster: PlanCluster;
  readonly versions: ResolvedVersions;
  /** kubeadm timeouts and control-plane probe slack the spec sets (slow machines). */
  readonly kubeadm: KubeadmSettings;
  readonly nodes: readonly PlanNode[];
  readonly hosts: readonly HostConnection[];
  readonly overlay: PodOverlay;
  readonly podNetworks: AddressRanges;
  readonly serviceNetworks: AddressRanges;
  readonly proxy: HttpProxy | undefined;
  readonly mirrors: Mirrors;
  /** Undefined when the cluster has no services node. */
  readonly services: ServicesSettings | undefined;
  /** libvirt driver: the hypervisors in spec order; empty for existing hosts. */
  readonly hypervisors: readonly Hypervisor[];
  /**
   * How Windows nodes run flanneld (flannel) and kube-proxy (flannel and
   * Calico): as HostProcess DaemonSets, whose pods get per-node, kubelet-renewed
   * ServiceAccount tokens. Undefined without Windows nodes.
   */
  readonly windowsHostProcess: WindowsHostProcess | undefined;
  /** The image each of verify's probe keys runs: the matrix's, or the spec's (spec.verify.probeImages). */
  readonly probeImages: Readonly<Record<string, string>>;
  /** How long verify waits for its probe pods to start (spec.verify.podStartTimeout), in seconds. */
  readonly verifyPodStartSeconds: number;
  /** How Linux nodes get kubeadm, kubelet and kubectl (spec.kubernetes.install). */
  readonly kubernetesInstall: 'binaries' | 'packages';
  /** Nodes never reach the internet: images come from the services registry only (spec.airGapped). */
  readonly airGapped: boolean;
  /**
   * Credentials split off the spec's URLs (model/url-credentials.ts): secret
   * name → value. Never in a plan: the CLI hands them to the executor's store.
   */
  readonly urlSecrets: UrlSecrets;
  readonly warnings: readonly ModelWarning[];
}

export function resolveModel(input: SpecResult): ClusterModel {
  const { spec, secrets: urlSecrets } = splitUrlCredentials(input.spec, input.nodes);
  const driver = driverFor(spec.driver);
  const net = parseCidr(spec.network.nodeCidr) as Cidr;
  const gateway = gatewayOf(net, spec.network.gateway);
  const drafts = input.nodes;
  const ips = ipsFor(spec, drafts, net, gateway);
  const macs = assignMacs(
    spec.name,
    drafts.map((d) => d.name),
  );
  const hypervisorNames = spec.hypervisors.map((h) => h.name);
  const placement = placeOnHypervisors(drafts, hypervisorNames);
  const hasLinuxWorker = drafts.some((d) => (d.role === 'worker' && !isWindows(d.os)) || d.alsoWorker);
  const overlay = resolveOverlay(spec);
  const podNetworks = addressRanges(spec.network.podCidr);
  const podCidrs = overlay.plugin === 'flannel' ? predictPodCidrs(podNetworks, drafts) : new Map<string, string>();
  const nodes = drafts.map((d): PlanNode => {
    const build = windowsRelease(d.os)?.build;
    const hypervisor = placement.get(d.name);
    const podCidr = podCidrs.get(d.name);
    return {
      name: d.name,
      fqdn: `${d.name}.${spec.name}.${spec.domain}`,
      role: d.role as NodeRole,
      schedulable: d.role === 'worker' || d.alsoWorker || (d.role === 'control-plane' && !hasLinuxWorker),
      os: d.os,
      osFamily: isWindows(d.os) ? 'windows' : 'linux',
      ...(build === undefined ? {} : { windowsBuild: build }),
      ip: ips.get(d.name) ?? '',
      ...(driver.createsMachines ? { mac: macs.get(d.name) ?? '' } : d.mac === undefined ? {} : { mac: d.mac }),
      ...(hypervisor === undefined ? {} : { hypervisor }),
      ...(d.resources === undefined ? {} : { resources: d.resources }),
      ...(podCidr === undefined ? {} : { podCidr: { cidr: podCidr, predicted: true as const } }),
      taints: taintsFor(d, hasLinuxWorker),
    };
  });
  const versions = resolveVersions(spec);
  const warnings: ModelWarning[] = [
    ...input.warnings.map((w) => ({ code: w.code, path: w.path, message: w.message })),
    ...controlPlaneSpread(drafts, placement, hypervisorNames),
  ];
  const cluster = clusterFacts(spec, versions, nodes, formatIp(4, gateway), warnings);
  return {
    spec,
    cluster,
    versions,
    kubeadm: spec.kubeadm,
    nodes,
    hosts: driver.hosts(spec, nodes),
    overlay,
    podNetworks,
    serviceNetworks: addressRanges(spec.network.serviceCidr),
    proxy: resolveProxy(spec),
    mirrors: resolveMirrors(spec),
    services: resolveServices(spec),
    hypervisors: driver.hypervisors(spec),
    windowsHostProcess: windowsHostProcess(spec, nodes),
    probeImages: { ...VERIFY_PROBE_IMAGES, ...spec.verify?.probeImages },
    verifyPodStartSeconds: spec.verify?.podStartSeconds ?? VERIFY_POD_START_SECONDS,
    kubernetesInstall: spec.kubernetesInstall,
    airGapped: spec.airGapped,
    urlSecrets,
    warnings,
  };
}

/**
 * The spec's images (each carries its binary at its root), or by default the
 * HostProcess base image from the matrix running the host binaries kubemix
 * installs and verifies.
 */
function windowsHostProcess(spec: ClusterSpec, nodes: readonly PlanNode[]): WindowsHostProcess | undefined {
  if (!nodes.some((n) => n.osFamily === 'windows')) return undefined;
  const own = spec.windows?.hostProcess;
  if (own !== undefined) return { ...own, fromImages: true };
  const base = `${IMAGES.hostProcessBase.repository}:${IMAGES.hostProcessBase.tag}@${IMAGES.hostProcessBase.digest}`;
  return { flannelImage: base, kubeProxyImage: base, fromImages: false };
}

function isWindows(os: string): boolean {
  return os.startsWith('windows');
}

function ipsFor(spec: ClusterSpec, drafts: readonly NodeDraft[], net: Cidr, gateway: bigint): Map<string, string> {
  if (!driverFor(spec.driver).createsMachines) return new Map(drafts.map((d) => [d.name, d.ip ?? '']));
  const ips = allocateAddresses(
    net,
    gateway,
    drafts.map((d) => d.role),
  );
  return new Map(drafts.map((d, i) => [d.name, ips[i] ?? '']));
}

/**
 * The controller-manager hands out pod CIDRs in registration order; we
 * predict control plane first, then workers in spec order, from the first
 * pod range when it is IPv4. Only a prediction. Calico's IPAM hands out /26
 * blocks on demand: there is no per-node range to predict.
 */
function predictPodCidrs(podNetworks: AddressRanges, drafts: readonly NodeDraft[]): Map<string, string> {
  const first = parseCidr(podNetworks.all[0] ?? '');
  const out = new Map<string, string>();
  if (first === undefined || first.family !== 4) return out;
  drafts
    .filter((d) => d.role !== 'services')
    .forEach((d, i) => out.set(d.name, formatCidr(subnetAt(first, NODE_POD_PREFIX, BigInt(i)))));
  return out;
}

function taintsFor(d: NodeDraft, hasLinuxWorker: boolean): string[] {
  if (d.role === 'control-plane' && !d.alsoWorker && hasLinuxWorker) return [CONTROL_PLANE_TAINT];
  if (d.role === 'worker' && isWindows(d.os)) return [WINDOWS_TAINT];
  return [];
}

function clusterFacts(
  spec: ClusterSpec,
  versions: ResolvedVersions,
  nodes: readonly PlanNode[],
  gateway: string,
  warnings: ModelWarning[],
): PlanCluster {
  const services = nodes.find((n) => n.role === 'services');
  const firstController = nodes.find((n) => n.role === 'control-plane');
  const viaLoadBalancer = services !== undefined && spec.services.loadBalancer;
  const host = `api.${spec.name}.${spec.domain}`;
  if (services === undefined || !spec.services.dns) {
    warnings.push({
      code: 'api.dns',
      path: 'spec.services.dns',
      message: `no services DNS: make ${host} resolve to ${viaLoadBalancer ? services?.ip : firstController?.ip} in your DNS before deploying`,
    });
  }
  const controllers = nodes.filter((n) => n.role === 'control-plane').length;
  if (!viaLoadBalancer && controllers > 1) {
    const message = `the API endpoint points at ${firstController?.name} only: with ${controllers} control-plane nodes and no load balancer the API is not highly available`;
    warnings.push({ code: 'api.no-load-balancer', path: 'spec.services.loadBalancer', message });
  }
  return {
    name: spec.name,
    domain: spec.domain,
    driver: spec.driver,
    versions: { ...versions },
    network: {
      nodeCidr: spec.network.nodeCidr,
      gateway,
      podCidr: spec.network.podCidr,
      serviceCidr: spec.network.serviceCidr,
      nodeMtu: nodeMtu(mtuSettings(spec)),
      podMtu: podMtu(mtuSettings(spec)),
    },
    cni: { plugin: spec.cni.plugin, backend: spec.cni.backend, vni: spec.cni.vni, port: spec.cni.port },
    apiEndpoint: { host, port: API_PORT, address: (viaLoadBalancer ? services?.ip : firstController?.ip) ?? '' },
  };
}
