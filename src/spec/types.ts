// The normalised cluster spec: schema defaults and derived defaults applied,
// sizes converted to numbers. Everything after spec/ reads this, never the
// raw YAML.
import type { BastionSpec, HypervisorSpec } from './schema.js';

export interface Resources {
  readonly vcpus: number;
  readonly ramMiB: number;
  readonly diskGiB: number;
}

export interface SshTarget {
  readonly address: string;
  readonly user: string;
  readonly port: number;
  readonly identityFile?: string | undefined;
  readonly bastion?: BastionSpec | undefined;
}

export interface ExistingHost extends SshTarget {
  readonly name: string;
  /** Node IP on the node network. */
  readonly ip: string;
  /** MAC of the node-network interface, for a DHCP reservation on the services node. */
  readonly mac?: string | undefined;
  readonly roles: readonly ('control-plane' | 'worker' | 'services')[];
  readonly os: string;
}

export interface WorkerGroup {
  readonly name: string;
  readonly count: number;
  readonly os: string;
  readonly resources: Resources;
  /** Pin: every node of the group on this hypervisor. */
  readonly hypervisor?: string;
}

export interface ClusterSpec {
  readonly name: string;
  readonly domain: string;
  /** As written: `1.36` or `1.36.2`. */
  readonly kubernetesVersion: string;
  /** Linux nodes: upstream's release binaries (through the download cache) or pkgs.k8s.io packages. */
  readonly kubernetesInstall: 'binaries' | 'packages';
  /** crictl's release when the spec pins one (`spec.kubernetes.crictl`); else the matrix's for the minor. */
  readonly crictlVersion?: string | undefined;
  /** Nodes never reach the internet (binaries from the download cache, images from the services registry). */
  readonly airGapped: boolean;
  /** As written: `2.3` or `2.3.2`. */
  readonly containerdVersion: string;
  /** kubeadm settings for slow machines; empty when the spec sets none. */
  readonly kubeadm: KubeadmSettings;
  readonly network: {
    readonly nodeCidr: string;
    readonly gateway?: string | undefined;
    readonly mtu?: number | undefined;
    readonly podCidr: string;
    readonly serviceCidr: string;
  };
  readonly cni: {
    readonly plugin: 'flannel' | 'calico';
    readonly backend: 'vxlan' | 'host-gw';
    readonly vni: number;
    readonly port: number;
    readonly mtu?: number | undefined;
  };
  readonly driver: 'libvirt' | 'existing';
  /** libvirt driver: the hypervisors, in order. */
  readonly hypervisors: readonly (HypervisorSpec & { readonly user: string })[];
  /** existing driver: the hosts, in order. */
  readonly hosts: readonly ExistingHost[];
  /** libvirt driver: the node groups. */
  readonly controlPlane: {
    readonly count: number;
    readonly distro: string;
    readonly resources: Resources;
    /** Pin: every control-plane node on this hypervisor. */
    readonly hypervisor?: string;
  };
  readonly workers: readonly WorkerGroup[];
  /** libvirt driver: node name → the hypervisor it is pinned to (wins over a group's pin). */
  readonly placement: Readonly<Record<string, string>>;
  readonly services: {
    readonly enabled: boolean;
    readonly distro: string;
    readonly dns: boolean;
    readonly loadBalancer: boolean;
    readonly dhcp: boolean;
    readonly registry: boolean;
    /** Upstream resolvers for the services node's Bind; default: the gateway. */
    readonly forwarders?: readonly string[];
    readonly resources: Resources;
    /** Pin: the services node on this hypervisor. */
    readonly hypervisor?: string;
  };
  readonly proxy?: {
    readonly http?: string | undefined;
    readonly https?: string | undefined;
    readonly noProxy: readonly string[];
  };
  readonly mirrors: { readonly images: Readonly<Record<string, string>>; readonly artifacts?: string | undefined };
  /** User pins by download id: a source URL and/or the SHA256 the file must have. */
  readonly downloads: Readonly<Record<string, DownloadOverride>>;
  /** Windows workers: images for the flanneld and kube-proxy HostProcess DaemonSets (default: the HostProcess base image running kubemix's host binaries). */
  readonly windows?: { readonly hostProcess?: { readonly flannelImage: string; readonly kubeProxyImage: string } };
  /** verify's probe images the spec names, by key of the matrix's (linux, ltsc2022, …), and its probe pods' start time. */
  readonly verify?: {
    readonly probeImages?: Readonly<Record<string, string>>;
    /** spec.verify.podStartTimeout in seconds: how long verify waits for its probe pods to start. */
    readonly podStartSeconds?: number;
  };
}

export interface DownloadOverride {
  readonly url?: string;
  /** Lower-case hex. */
  readonly sha256?: string;
}

/** kubeadm v1beta4 `timeouts` field names. */
export const KUBEADM_TIMEOUT_NAMES = [
  'controlPlaneComponentHealthCheck',
  'kubeletHealthCheck',
  'kubernetesAPICall',
  'etcdAPICall',
  'tlsBootstrap',
  'discovery',
  'upgradeManifests',
] as const;
export type KubeadmTimeoutName = (typeof KUBEADM_TIMEOUT_NAMES)[number];

/** spec.kubernetes.leaderElection's fields, and their defaults in kube-controller-manager and kube-scheduler (seconds). */
export const LEADER_ELECTION_DEFAULTS = { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 } as const;
export type LeaderElectionName = keyof typeof LEADER_ELECTION_DEFAULTS;

/** spec.kubernetes.etcd's fields, and etcd's defaults (milliseconds). */
export const ETCD_TIMING_DEFAULTS = { heartbeatInterval: 100, electionTimeout: 1000 } as const;
export type EtcdTimingName = keyof typeof ETCD_TIMING_DEFAULTS;

export interface KubeadmSettings {
  /** The timeouts the spec sets, in seconds; the others keep kubeadm's defaults. */
  readonly timeouts: Readonly<Partial<Record<KubeadmTimeoutName, number>>>;
  /** kube-controller-manager's and kube-scheduler's leader election, in seconds; undefined when the spec sets none. */
  readonly leaderElection?: Readonly<Partial<Record<LeaderElectionName, number>>>;
  /** The kubelet's runtime request timeout, in seconds; undefined when the spec sets none. */
  readonly kubelet?: { readonly runtimeRequestTimeout: number };
  /** etcd's heartbeat and election timeout, in milliseconds; undefined when the spec sets none. */
  readonly etcd?: Readonly<Partial<Record<EtcdTimingName, number>>>;
  /** Probe slack on the control-plane static pods (kubeadm patches); undefined when the spec sets none. */
  readonly controlPlaneProbes?: { readonly timeoutSeconds?: number; readonly livenessFailureThreshold?: number };
  /** kubeadm preflight checks that only warn (spec order); undefined when the spec sets none. */
  readonly ignorePreflightErrors?: readonly string[];
}
