// Derived defaults: values whose default depends on other fields.
import { DEFAULT_LINUX_DISTRO } from '../matrix/index.js';
import type { ClusterSpecParsed } from './schema.js';
import { durationSeconds, etcdMilliseconds } from './checks.js';
import {
  KUBEADM_TIMEOUT_NAMES,
  type ClusterSpec,
  type ExistingHost,
  type KubeadmSettings,
  type Resources,
} from './types.js';

/** Default machine sizes by kind of node (Windows Server needs the larger disk). */
export const DEFAULT_RESOURCES = {
  controlPlane: { vcpus: 4, ramMiB: 8192, diskGiB: 40 },
  linuxWorker: { vcpus: 4, ramMiB: 8192, diskGiB: 40 },
  windowsWorker: { vcpus: 4, ramMiB: 8192, diskGiB: 80 },
  services: { vcpus: 2, ramMiB: 4096, diskGiB: 40 },
} as const satisfies Record<string, Resources>;

const UNIT_MIB: Record<string, number> = { Mi: 1, M: 1, Gi: 1024, G: 1024, Ti: 1024 * 1024, T: 1024 * 1024 };

/** `8Gi` → 8192 (MiB). The schema has already checked the format. */
export function quantityToMiB(text: string): number {
  const match = /^(\d+)([A-Za-z]+)$/.exec(text);
  if (match === null) return Number.NaN;
  return Number(match[1]) * (UNIT_MIB[match[2] ?? ''] ?? Number.NaN);
}

interface ResourceInput {
  readonly vcpus?: number | undefined;
  readonly ram?: string | undefined;
  readonly disk?: string | undefined;
}

function resources(input: ResourceInput, fallback: Resources): Resources {
  return {
    vcpus: input.vcpus ?? fallback.vcpus,
    ramMiB: input.ram === undefined ? fallback.ramMiB : quantityToMiB(input.ram),
    diskGiB: input.disk === undefined ? fallback.diskGiB : Math.ceil(quantityToMiB(input.disk) / 1024),
  };
}

export function isWindowsOs(os: string): boolean {
  return os.startsWith('windows');
}

export function normalise(parsed: ClusterSpecParsed): ClusterSpec {
  const s = parsed.spec;
  const nodes = s.nodes ?? { controlPlane: { count: 1 }, workers: [], placement: {} };
  const controlDistro = nodes.controlPlane.distro ?? DEFAULT_LINUX_DISTRO;
  const infra = s.infrastructure;
  return {
    name: parsed.metadata.name,
    domain: s.domain,
    kubernetesVersion: s.kubernetes.version,
    kubernetesInstall: s.kubernetes.install,
    crictlVersion: s.kubernetes.crictl,
    airGapped: s.airGapped,
    containerdVersion: s.containerRuntime.containerd,
    kubeadm: kubeadmSettings(s.kubernetes),
    network: s.network,
    cni: s.cni,
    driver: infra.driver,
    // Each driver's block of the schema holds one list: hypervisors or hosts.
    hypervisors: 'hypervisors' in infra ? infra.hypervisors.map((h) => ({ ...h, user: h.user ?? 'root' })) : [],
    hosts: 'hosts' in infra ? infra.hosts.map(existingHost) : [],
    controlPlane: {
      count: nodes.controlPlane.count,
      distro: controlDistro,
      resources: resources(nodes.controlPlane, DEFAULT_RESOURCES.controlPlane),
      ...pin(nodes.controlPlane.hypervisor),
    },
    workers: nodes.workers.map((g) => ({
      name: g.name,
      count: g.count,
      os: g.os,
      resources: resources(g, isWindowsOs(g.os) ? DEFAULT_RESOURCES.windowsWorker : DEFAULT_RESOURCES.linuxWorker),
      ...pin(g.hypervisor),
    })),
    placement: nodes.placement,
    services: {
      enabled: s.services.enabled,
      distro: s.services.distro ?? controlDistro,
      dns: s.services.dns,
      loadBalancer: s.services.loadBalancer,
      dhcp: s.services.dhcp,
      registry: s.services.registry,
      ...(s.services.forwarders === undefined ? {} : { forwarders: s.services.forwarders }),
      resources: resources(s.services, DEFAULT_RESOURCES.services),
      ...pin(s.services.hypervisor),
    },
    ...(s.proxy === undefined ? {} : { proxy: s.proxy }),
    mirrors: s.mirrors,
    downloads: Object.fromEntries(
      Object.entries(s.downloads).map(([id, d]) => [
        id,
        {
          ...(d.url === undefined ? {} : { url: d.url }),
          ...(d.sha256 === undefined ? {} : { sha256: d.sha256.toLowerCase() }),
        },
      ]),
    ),
    ...(s.windows?.hostProcess === undefined ? {} : { windows: { hostProcess: s.windows.hostProcess } }),
    ...(s.verify === undefined ? {} : { verify: verifySettings(s.verify) }),
  };
}

function kubeadmSettings(k: ClusterSpecParsed['spec']['kubernetes']): KubeadmSettings {
  const timeouts = Object.fromEntries(
    KUBEADM_TIMEOUT_NAMES.flatMap((name) => {
      const text = k.timeouts?.[name];
      return text === undefined ? [] : [[name, durationSeconds(text)]];
    }),
  );
  const p = k.controlPlaneProbes;
  const probes = {
    ...(p?.timeoutSeconds === undefined ? {} : { timeoutSeconds: p.timeoutSeconds }),
    ...(p?.livenessFailureThreshold === undefined ? {} : { livenessFailureThreshold: p.livenessFailureThreshold }),
  };
  const election = Object.fromEntries(
    Object.entries(k.leaderElection ?? {}).flatMap(([name, text]) =>
      text === undefined ? [] : [[name, durationSeconds(text)]],
    ),
  );
  const etcd = Object.fromEntries(
    Object.entries(k.etcd ?? {}).flatMap(([name, text]) =>
      text === undefined ? [] : [[name, etcdMilliseconds(text)]],
    ),
  );
  return {
    timeouts,
    ...(Object.keys(election).length === 0 ? {} : { leaderElection: election }),
    ...(Object.keys(etcd).length === 0 ? {} : { etcd }),
    ...(k.kubelet?.runtimeRequestTimeout === undefined
      ? {}
      : { kubelet: { runtimeRequestTimeout: durationSeconds(k.kubelet.runtimeRequestTimeout) } }),
    ...(Object.keys(probes).length === 0 ? {} : { controlPlaneProbes: probes }),
    ...(k.ignorePreflightErrors === undefined ? {} : { ignorePreflightErrors: [...k.ignorePreflightErrors] }),
  };
}

function pin(hypervisor: string | undefined): { hypervisor?: string } {
  return hypervisor === undefined ? {} : { hypervisor };
}

function existingHost(
  h: Extract<ClusterSpecParsed['spec']['infrastructure'], { driver: 'existing' }>['hosts'][number],
): ExistingHost {
  const { user, ip, mac, ...rest } = h;
  return {
    ...rest,
    // dnsmasq and the duplicate check compare MACs as lower-case text.
    ...(mac === undefined ? {} : { mac: mac.toLowerCase() }),
    ip: ip ?? h.address,
    user: user ?? (isWindowsOs(h.os) ? 'Administrator' : 'root'),
  };
}

/** The entries of a record of optional values that are set. */
function verifySettings(v: NonNullable<ClusterSpecParsed['spec']['verify']>): NonNullable<ClusterSpec['verify']> {
  return {
    ...(v.probeImages === undefined ? {} : { probeImages: definedOnly(v.probeImages) }),
    ...(v.podStartTimeout === undefined ? {} : { podStartSeconds: durationSeconds(v.podStartTimeout) }),
  };
}

function definedOnly(record: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((e): e is [string, string] => e[1] !== undefined));
}
