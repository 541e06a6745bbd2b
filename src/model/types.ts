// The vocabulary every step after the model speaks: the cluster, its nodes and
// how the executor reaches each host. Pure data, JSON-serialisable, stable.

export type Shell = 'sh' | 'powershell';
/** `root`: run with root/Administrator rights (sudo for non-root SSH users). */
export type Privilege = 'root' | 'user';

/** How the executor reaches a host (a node or a hypervisor). */
export interface HostConnection {
  readonly name: string;
  /** IP address or DNS name to connect to. */
  readonly address: string;
  readonly port: number;
  readonly user: string;
  /** Private key file; absent means ssh-agent / default identities. */
  readonly identityFile?: string;
  /** Jump host (ProxyJump) to reach `address` through. */
  readonly bastion?: {
    readonly address: string;
    readonly port: number;
    readonly user: string;
    readonly identityFile?: string;
  };
  /** The shell the host's SSH server runs commands in. */
  readonly shell: Shell;
  /**
   * `kubemix`: a machine kubemix creates. Its host key is pinned before first
   * contact and the login uses the cluster key in the state directory.
   * `user`: a machine the user provides; keys follow the host-key policy.
   */
  readonly provisioner: 'kubemix' | 'user';
}

export type NodeRole = 'control-plane' | 'worker' | 'services';

export interface PlanNode {
  readonly name: string;
  readonly fqdn: string;
  readonly role: NodeRole;
  readonly schedulable: boolean;
  /** `debian-13`, `windows-2022`, … */
  readonly os: string;
  readonly osFamily: 'linux' | 'windows';
  /** Windows build (`10.0.20348`) for Windows nodes. */
  readonly windowsBuild?: string;
  readonly ip: string;
  /** MAC of the VM's NIC (libvirt); absent for existing hosts. */
  readonly mac?: string;
  /** Hypervisor the VM runs on (libvirt driver); absent for existing hosts. */
  readonly hypervisor?: string;
  /** Planned VM size (libvirt); absent for existing hosts. */
  readonly resources?: { readonly vcpus: number; readonly ramMiB: number; readonly diskGiB: number };
  /**
   * The controller-manager assigns pod CIDRs in registration order: this is a
   * prediction, never something a node depends on at run time.
   */
  readonly podCidr?: { readonly cidr: string; readonly predicted: true };
  /** Taints the node registers with (`key=value:Effect`). */
  readonly taints: readonly string[];
}

export interface PlanCluster {
  readonly name: string;
  readonly domain: string;
  readonly driver: 'libvirt' | 'existing';
  readonly versions: Readonly<Record<string, string>>;
  readonly network: {
    readonly nodeCidr: string;
    readonly gateway: string;
    readonly podCidr: string;
    readonly serviceCidr: string;
    readonly nodeMtu: number;
    readonly podMtu: number;
  };
  readonly cni: {
    readonly plugin: 'flannel' | 'calico';
    readonly backend: 'vxlan' | 'host-gw';
    readonly vni: number;
    readonly port: number;
  };
  readonly apiEndpoint: { readonly host: string; readonly port: number; readonly address: string };
}

/**
 * How pods on different nodes reach each other, resolved once from the spec's
 * cni settings: ask `vxlan !== undefined` rather than comparing backend names.
 */
export interface PodOverlay {
  readonly plugin: 'flannel' | 'calico';
  readonly backend: 'vxlan' | 'host-gw';
  /**
   * VXLAN's VNI and UDP port between nodes. Undefined for host-gw, which does
   * not encapsulate: pod traffic is routed via node IPs on one L2 segment.
   */
  readonly vxlan: { readonly vni: number; readonly port: number } | undefined;
  /** The pod MTU: node MTU less the encapsulation header. */
  readonly podMtu: number;
}

/**
 * The pod or the service network: one range per address family (dual-stack
 * gives two), parsed once from the spec's comma-separated text.
 */
export interface AddressRanges {
  /** Every range, trimmed, in the order the spec lists them (kubeadm's podSubnet order). */
  readonly all: readonly string[];
  readonly ipv4: string | undefined;
  readonly ipv6: string | undefined;
}

/** The operator's HTTP proxy; undefined when the spec sets neither http nor https. */
export interface HttpProxy {
  readonly http: string | undefined;
  readonly https: string | undefined;
  /** The operator's own bypass list (the cluster's networks and names are added where it is used). */
  readonly noProxy: readonly string[];
}

export interface Mirrors {
  /** Registry → mirror, sorted by registry name. */
  readonly images: readonly { readonly registry: string; readonly mirror: string }[];
  /** Base URL that serves upstream downloads under `<mirror>/<host>/<path>`. */
  readonly artifacts: string | undefined;
}

/** The images of the Windows flanneld and kube-proxy HostProcess pods. */
export interface WindowsHostProcess {
  readonly flannelImage: string;
  readonly kubeProxyImage: string;
  /**
   * true: the spec's images, each with its binary at its root; false: the
   * HostProcess base image, running the host binaries kubemix installs.
   */
  readonly fromImages: boolean;
}

/** What the services node runs; the model has one only when spec.services.enabled. */
export interface ServicesSettings {
  readonly dns: boolean;
  readonly loadBalancer: boolean;
  /** DHCP asked for; it serves only nodes with a known MAC. */
  readonly dhcp: boolean;
  readonly registry: boolean;
  /** Upstream resolvers for Bind; undefined means the gateway. */
  readonly forwarders: readonly string[] | undefined;
}

/** A libvirt hypervisor: where its guests run and how virsh reaches libvirtd there. */
export interface Hypervisor {
  readonly name: string;
  readonly address: string;
  readonly libvirtUri: string;
  /** Guests' domain type: fixed by the user, or `auto` (task-prepare-hypervisors probes KVM). */
  readonly domainType: 'auto' | 'kvm' | 'qemu';
}
