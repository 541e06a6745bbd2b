// The cluster spec schema (kubemix.dev/v1alpha1, kind Cluster). One zod
// schema is both the validator and, through `z.toJSONSchema`, the JSON Schema
// editors use (schema/cluster.schema.json, kept current by a test).
//
// Static defaults live here; defaults that depend on other fields (resources
// by OS, MTU by topology, API endpoint) are filled in by normalise.ts.
import { z } from 'zod';
import { DEFAULT_LIBVIRT_URI } from '../drivers/libvirt/names.js';
import {
  DEFAULT_CONTAINERD_LINE,
  DEFAULT_KUBERNETES_MINOR,
  VERIFY_POD_START_SECONDS,
  VERIFY_PROBE_IMAGES,
} from '../matrix/index.js';
import {
  MAX_URL_LENGTH,
  MAX_USERINFO_LENGTH,
  SPEC_API_VERSION,
  diskWithinLimit,
  durationWithinLimit,
  ETCD_MAX_ELECTION_MS,
  etcdDurationWithinLimit,
  hasDecodableFilePath,
  hasNoFragment,
  hasUsableUserinfo,
  isPreflightIgnoreList,
  isDownloadUrlScheme,
  isHttpUrl,
  ramWithinLimit,
} from './checks.js';

export { MAX_DISK_MIB, MAX_RAM_MIB, SPEC_API_VERSION, quantityMiB } from './checks.js';

const dnsLabel = z
  .string()
  .max(63)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    'must be a DNS label: lower-case letters, digits and "-", not starting or ending with "-"',
  );
const dnsName = z
  .string()
  .max(253)
  .regex(
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    'must be a DNS name such as kubeinit.local',
  );
// Free-form text that lands in scripts and config files: printable and on
// one line. Control characters (a newline ends a unit-file setting, an
// inventory line, a TOML key), NUL and lone surrogates no file can carry.
// The escapers (src/util/escape) quote what is left for each format.
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]*$/;
const CONTROL_MESSAGE = 'must not contain control characters, line breaks or invalid Unicode';
const text = (max: number) => z.string().min(1).max(max).regex(NO_CONTROL, CONTROL_MESSAGE);

/** http(s) URL, as the WHATWG URL parser reads it, without quotes, whitespace, backslashes or braces. */
const URL_CHARACTERS = /^[^\s'"\\`<>{}|^\u0000-\u001f\u007f-\u009f]+$/;
const URL_CHARACTERS_MESSAGE =
  'must be a URL without quotes, whitespace, backslashes or <>{}|^` (write a space as %20)';
const httpUrl = z
  .string()
  .max(MAX_URL_LENGTH)
  .regex(URL_CHARACTERS, URL_CHARACTERS_MESSAGE)
  .refine(isHttpUrl, 'must be an http:// or https:// URL with a host, such as https://mirror.example.com/files')
  .refine(hasNoFragment, 'must not hold a #fragment')
  .refine(
    hasUsableUserinfo,
    `user:password@ must name a user, be valid percent-encoding (write @ as %40, : in the user as %3A) and hold at most ${MAX_USERINFO_LENGTH} characters`,
  );

const hostAddress = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.:_-]+$/, 'must be an IP address or a host name');
const port = z.number().int().min(1).max(65535);
/** Sizes with a binary unit: `512Mi`, `8Gi`, `1Ti` (`M`, `G`, `T` mean the same, as in qemu and Kubeinit). */
export const quantity = z
  .string()
  .max(16)
  .regex(/^[1-9][0-9]*(Mi|Gi|Ti|M|G|T)$/, 'must be a size with a unit, such as 8Gi or 512Mi');
// A refinement's predicate is a named function of checks.ts, so the generated parser can call the same one.
const bounded = (withinLimit: (quantity: string) => boolean, unit: string) =>
  quantity.refine(withinLimit, `must be at most ${unit}: no machine has more`);
const version = (what: string) =>
  z.string().regex(/^\d+\.\d+(\.\d+)?$/, `must be a ${what} version such as 1.36 or 1.36.2`);
const path = text(4096);
// Linux (useradd: [a-z_][a-z0-9_-]*) and Windows account names; `@` for user@domain.
const userName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._@-]*$/, 'must be a user name: letters, digits and . _ @ -');
// OS ids and distro names: debian-13, ubuntu-24.04, windows-2022 (checked against the matrix later).
const osName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be an operating system id such as debian-13 or windows-2022');
// Addresses and CIDRs before the network rules read them: digits, hex, dots, colons, slashes, commas.
const netText = z
  .string()
  .max(128)
  .regex(/^[0-9A-Fa-f.:/, ]*$/, 'must be an IP address or CIDR such as 10.0.0.0/24');

const bastion = z.strictObject({
  address: hostAddress.describe('Jump host address'),
  port: port.default(22),
  user: userName.default('root'),
  identityFile: path.optional(),
});

const sshFields = {
  user: userName.optional().describe('SSH user (default root; Administrator on Windows)'),
  port: port.default(22),
  identityFile: path.optional().describe('Private key file; default: ssh-agent'),
  bastion: bastion.optional().describe('Jump host (ProxyJump) in front of this host'),
};

// A libvirt connection URI (driver[+transport]://[host]/path[?params]), as virsh -c takes it.
const libvirtUri = z
  .string()
  .max(1024)
  .regex(
    /^[a-z][a-z0-9]*(\+[a-z0-9]+)?:\/\/[A-Za-z0-9._~:@/?&=%+,[\]-]*$/,
    'must be a libvirt connection URI such as qemu:///system, without quotes, spaces or shell characters',
  );

const hypervisor = z.strictObject({
  name: dnsLabel,
  address: hostAddress,
  ...sshFields,
  libvirtUri: libvirtUri
    .default(DEFAULT_LIBVIRT_URI)
    .describe('libvirt connection URI on the hypervisor (virsh -c); default qemu:///system'),
  domainType: z
    .enum(['auto', 'kvm', 'qemu'])
    .default('auto')
    .describe(
      'Domain type of the guests: kvm, qemu (software emulation, slow), or auto: kvm when a test guest really runs under it, else qemu with a warning',
    ),
});

export const ROLES = ['control-plane', 'worker', 'services'] as const;

const existingHost = z.strictObject({
  name: dnsLabel,
  address: hostAddress.describe('Where SSH reaches the host'),
  ip: netText.optional().describe('Node IP on the node network; default: address'),
  mac: z
    .string()
    .regex(/^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$/, 'must be a MAC address such as 52:54:00:12:34:56')
    .optional()
    .describe("MAC of the host's node-network interface: the services node's dnsmasq leases the node IP to it (DHCP)"),
  roles: z.array(z.enum(ROLES)).min(1),
  os: osName.describe('debian-13, ubuntu-24.04, centos-stream-10, windows-2022, windows-2025, …'),
  ...sshFields,
});

const infrastructure = z.discriminatedUnion('driver', [
  z.strictObject({
    driver: z.literal('libvirt'),
    hypervisors: z.array(hypervisor).min(1),
  }),
  z.strictObject({
    driver: z.literal('existing'),
    hosts: z.array(existingHost).min(1),
  }),
]);

const resources = {
  vcpus: z.number().int().min(1).max(512).optional(),
  ram: bounded(ramWithinLimit, '64Ti').optional(),
  disk: bounded(diskWithinLimit, '1024Ti').optional(),
};

/** A pin: the name of one of spec.infrastructure.hypervisors (checked by the placement rule). */
const hypervisorPin = (what: string) =>
  dnsLabel.optional().describe(`libvirt: run ${what} on this hypervisor (a name from infrastructure.hypervisors)`);

const controlPlane = z.strictObject({
  count: z.number().int().min(0).max(99).default(1),
  distro: osName.optional().describe('Linux distribution of the control plane'),
  hypervisor: hypervisorPin('every control-plane node (no spreading across hypervisors)'),
  ...resources,
});

const workerGroup = z.strictObject({
  name: dnsLabel.default('compute').describe('Node name prefix: <name>-01, <name>-02, …'),
  count: z.number().int().min(0).max(999),
  os: osName.describe('A Linux distribution, or windows-2022 / windows-2025'),
  hypervisor: hypervisorPin("this group's nodes"),
  ...resources,
});

const nodes = z.strictObject({
  controlPlane: controlPlane.prefault({}),
  workers: z.array(workerGroup).default([]),
  placement: z
    .record(dnsLabel, dnsLabel)
    .default({})
    .describe("Node name → hypervisor name (controller-02: hypervisor-02); wins over a group's hypervisor"),
});

const services = z.strictObject({
  enabled: z.boolean().default(true),
  distro: osName.optional(),
  dns: z.boolean().default(true),
  loadBalancer: z.boolean().default(true),
  dhcp: z.boolean().default(true),
  registry: z.boolean().default(true),
  hypervisor: hypervisorPin('the services node'),
  forwarders: z
    .array(z.ipv4())
    .min(1)
    .optional()
    .describe('Upstream DNS resolvers for the services node; default: the node network gateway'),
  ...resources,
});

const network = z.strictObject({
  nodeCidr: netText.default('10.0.0.0/24'),
  gateway: netText.optional().describe('Default: the last usable address of the node network'),
  mtu: z
    .number()
    .int()
    .min(576)
    .max(9216)
    .optional()
    .describe('Node network MTU; default 1500, 1450 across the VXLAN mesh of several hypervisors (at most 1450 there)'),
  podCidr: netText.default('10.244.0.0/16').describe('One CIDR, or two separated by a comma for dual-stack'),
  serviceCidr: netText.default('10.96.0.0/12'),
});

const cni = z.strictObject({
  plugin: z.enum(['flannel', 'calico']).default('flannel'),
  backend: z.enum(['vxlan', 'host-gw']).default('vxlan'),
  vni: z.number().int().min(1).max(16777215).default(4096),
  port: port.default(4789),
  mtu: z.number().int().min(576).max(9216).optional().describe('Pod MTU; default: node MTU minus the overlay overhead'),
});

const proxy = z.strictObject({
  http: httpUrl.optional(),
  https: httpUrl.optional(),
  // NO_PROXY entries: host names, .domains, IPs, CIDRs, host:port, [IPv6], `*`.
  noProxy: z
    .array(
      z
        .string()
        .min(1)
        .max(253)
        .regex(
          /^[A-Za-z0-9.*:/_[\]-]+$/,
          'must be a host name, .domain, IP address or CIDR, without spaces, quotes or commas',
        ),
    )
    .max(1000)
    .default([]),
});

// A container image reference as a user names it: `registry/repo:tag` or `…@sha256:…`.
const imageRef = z
  .string()
  .min(1)
  .max(512)
  .regex(
    /^[a-z0-9]([a-z0-9._:/-]*[a-z0-9])?(:[A-Za-z0-9_.-]+)?(@sha256:[0-9a-f]{64})?$/,
    'must be an image reference such as registry.example.com/flannel:v0.28.4-hostprocess',
  );

const windows = z.strictObject({
  hostProcess: z
    .strictObject({
      flannelImage: imageRef.describe(
        'Image with flanneld.exe at its root; kubemix renders the DaemonSet, it builds no image',
      ),
      kubeProxyImage: imageRef.describe(
        "Image with kube-proxy.exe at its root, matching the cluster's Kubernetes version",
      ),
    })
    .optional()
    .describe(
      "Images for the Windows flanneld and kube-proxy HostProcess DaemonSets, instead of Microsoft's HostProcess base image running the binaries kubemix installs (with Calico only kubeProxyImage is used)",
    ),
});

const mirrors = z.strictObject({
  images: z
    .record(
      // The host-name form of the key is the mirrors.registry rule's to check (it says what to write instead).
      text(253),
      z
        .string()
        .min(1)
        .max(512)
        .regex(
          /^(https?:\/\/)?[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~/-]*)?$/,
          'must be a registry host with an optional port and path, such as mirror.example.com/k8s',
        ),
    )
    .default({})
    .describe('Registry host → mirror, e.g. registry.k8s.io: mirror.example.com/k8s'),
  artifacts: httpUrl.optional().describe('Base URL that serves release downloads in place of their origins'),
});

const downloadOverride = z.strictObject({
  url: z
    .string()
    .max(MAX_URL_LENGTH)
    .regex(URL_CHARACTERS, URL_CHARACTERS_MESSAGE)
    .refine(
      isDownloadUrlScheme,
      'must be an http(s):// URL with a host, or a file:/// path on the machine that fetches it',
    )
    .refine(hasNoFragment, 'must not hold a #fragment: the fetcher drops it, and with it what it says')
    .refine(
      hasUsableUserinfo,
      `user:password@ must name a user, be valid percent-encoding (write @ as %40, : in the user as %3A) and hold at most ${MAX_USERINFO_LENGTH} characters`,
    )
    .refine(
      hasDecodableFilePath,
      'a file: path must not encode "/" or NUL (%2F, %00) and must be valid UTF-8 once decoded',
    )
    .optional()
    .describe('Where the deployer fetches the file instead (an internal mirror, a newer build); needs sha256'),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal digits')
    .optional()
    .describe("SHA256 the file must have; wins over the matrix and over upstream's published checksum"),
});

/** A duration in one unit, as a kubeadm timeout: `90s`, `10m`, `1h` (at most 24h). */
const duration = z
  .string()
  .regex(/^[1-9][0-9]{0,5}(s|m|h)$/, 'must be a duration such as 90s, 10m or 1h')
  .refine(durationWithinLimit, 'must be at most 24h');

/**
 * verify: its probe images by key (linux, ltsc2022, …), which an air-gapped site
 * names the ones it carries; and how long its probe pods may take to start.
 */
const verify = z.strictObject({
  probeImages: z
    .strictObject(
      Object.fromEntries(
        Object.entries(VERIFY_PROBE_IMAGES).map(([key, ref]) => [
          key,
          imageRef.optional().describe(`The image verify's ${key} probe pods run (default ${ref})`),
        ]),
      ),
    )
    .optional()
    .describe(
      "Images verify's probe pods run instead of the matrix's: with airGapped, `up` pushes and checks these (a BusyBox with sh, httpd, wget, timeout, nc and nslookup on Linux; a Server Core of the node's LTSC line on Windows)",
    ),
  podStartTimeout: duration
    .optional()
    .describe(
      `How long verify waits for its probe pods to be scheduled, pulled and started before it judges the cells (default ${VERIFY_POD_START_SECONDS / 60}m); raise it on slow machines`,
    ),
});

/**
 * kubeadm v1beta4 `timeouts` (InitConfiguration, JoinConfiguration,
 * UpgradeConfiguration); each one left out keeps kubeadm's default
 * (cmd/kubeadm/app/constants/constants.go).
 */
const kubeadmTimeouts = z.strictObject({
  controlPlaneComponentHealthCheck: duration
    .optional()
    .describe(
      "How long kubeadm waits for the control-plane components to become healthy; also the static pods' startup probe window (default 4m)",
    ),
  kubeletHealthCheck: duration
    .optional()
    .describe("How long kubeadm waits for the kubelet's health endpoint (default 4m)"),
  kubernetesAPICall: duration.optional().describe('Each call kubeadm makes to the API server (default 1m)'),
  etcdAPICall: duration.optional().describe('Each call kubeadm makes to etcd (default 2m)'),
  tlsBootstrap: duration
    .optional()
    .describe("How long a joining node's kubelet has for its TLS bootstrap (default 5m)"),
  discovery: duration.optional().describe('How long a join waits to discover and trust the API server (default 5m)'),
  upgradeManifests: duration
    .optional()
    .describe('How long an upgrade waits for each static pod to come back (default 5m)'),
});

const controlPlaneProbes = z.strictObject({
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(600)
    .optional()
    .describe(
      "Each probe's timeout on etcd, kube-apiserver, kube-controller-manager and kube-scheduler (kubeadm: 15); also HAProxy's check of /readyz, and half of it kube-apiserver's own etcd checks (default 2 s)",
    ),
  livenessFailureThreshold: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      'Failed liveness probes, 10 s apart, before the kubelet restarts a component (kubeadm: 8); also the failed checks before HAProxy drops an API server (3)',
    ),
});

/**
 * kube-controller-manager's and kube-scheduler's leader election (their
 * `--leader-elect-*` flags): on a slow control plane a lease renewal that
 * misses its deadline stops every controller until the kubelet restarts the
 * component. Defaults 15s, 10s, 2s.
 */
const leaderElection = z.strictObject({
  leaseDuration: duration.optional().describe('How long a lease holds without renewal (default 15s)'),
  renewDeadline: duration
    .optional()
    .describe(
      'How long the leader keeps trying to renew before it gives up; half of it is each call’s timeout (default 10s)',
    ),
  retryPeriod: duration.optional().describe('How long to wait between tries (default 2s)'),
});

/**
 * A duration etcd's flags can carry: whole milliseconds (`--heartbeat-interval`
 * and `--election-timeout` are integers of ms), written as 500ms or 10s.
 */
const etcdDuration = z
  .string()
  .regex(/^[1-9][0-9]{0,4}(ms|s)$/, 'must be a duration such as 500ms or 10s')
  .refine(etcdDurationWithinLimit, `must be at most ${ETCD_MAX_ELECTION_MS / 1000}s`);

/**
 * The control plane's etcd (kubeadm's local etcd, every member alike): etcd
 * fails a request that takes longer than 5 s + 2 × the election timeout
 * (`etcdserver: request timed out`), and on a slow machine a lease renewal
 * that fails so stops every controller. etcd's tuning guide: the heartbeat
 * near the members' round trip, the election timeout about ten times it.
 */
const etcdTiming = z.strictObject({
  heartbeatInterval: etcdDuration
    .optional()
    .describe("How often the leader tells followers it is there (etcd's --heartbeat-interval; default 100ms)"),
  electionTimeout: etcdDuration
    .optional()
    .describe(
      "How long a follower waits before it calls an election (etcd's --election-timeout; default 1s); also sets how long etcd lets a request take: 5 s + 2 × it",
    ),
});

/**
 * The kubelet on every node (KubeletConfiguration, kept in kubeadm's
 * kubelet-config ConfigMap: joins and upgrades take it from there).
 */
const kubeletSettings = z.strictObject({
  runtimeRequestTimeout: duration
    .optional()
    .describe(
      'How long the kubelet lets containerd take to create or start a container, and every other CRI call but pulls, logs, exec and attach; past it the start is cancelled and tried again (KubeletConfiguration runtimeRequestTimeout; default 2m)',
    ),
});

/**
 * kubeadm preflight checks reported as warnings instead of errors, on every
 * kubeadm init, join and upgrade. For checks a slow machine fails while the
 * cluster is fine: `kubeadm upgrade apply`'s CreateJob waits a fixed minute
 * for a test Job (cmd/kubeadm/app/phases/upgrade/health.go), no setting
 * raises it, and under software emulation, right after a drain moved pods
 * onto the others, a Job can take longer.
 */
const preflightCheckName = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9.-]{0,127}$/,
    "a kubeadm preflight check's name as kubeadm prints it in [ERROR …], such as CreateJob or Port-6443, or all",
  );

const kubernetes = z.strictObject({
  version: version('Kubernetes').default(DEFAULT_KUBERNETES_MINOR),
  install: z
    .enum(['binaries', 'packages'])
    .default('binaries')
    .describe(
      "How Linux nodes get kubeadm, kubelet and kubectl: binaries (upstream's release files, SHA256-checked, through the services node's download cache; works air-gapped) or packages (pkgs.k8s.io's deb/rpm repository, held)",
    ),
  crictl: z
    .string()
    .regex(/^\d+\.\d+\.\d+$/, 'a release like 1.36.0')
    .optional()
    .describe(
      "crictl's release on Linux nodes, instead of the matrix's for this Kubernetes minor (cri-tools' own minor); for a bundle that carries another one — crictl speaks CRI v1 with every kubelet kubemix supports",
    ),
  ignorePreflightErrors: z
    .array(preflightCheckName)
    .min(1)
    .refine(isPreflightIgnoreList, "names each check once (kubeadm ignores case), and 'all' only alone")
    .optional()
    .describe(
      "kubeadm preflight checks that only warn, on every init, join and upgrade (kubeadm's ignorePreflightErrors), such as [CreateJob]: kubeadm upgrade apply's test Job has a fixed minute, which a slow machine can miss",
    ),
  timeouts: kubeadmTimeouts
    .optional()
    .describe("kubeadm's timeouts, raised for slow machines (software emulation, small VMs)"),
  leaderElection: leaderElection
    .optional()
    .describe(
      "kube-controller-manager's and kube-scheduler's leader election, relaxed for slow machines (a missed renewal stops every controller)",
    ),
  kubelet: kubeletSettings
    .optional()
    .describe(
      "The kubelet's own timeouts, relaxed for slow machines (a container start that outlasts them is cancelled and tried again, forever)",
    ),
  etcd: etcdTiming
    .optional()
    .describe(
      "etcd's heartbeat and election timeout, relaxed for slow machines (every request etcd serves must end within 5 s + 2 × the election timeout)",
    ),
  controlPlaneProbes: controlPlaneProbes
    .optional()
    .describe(
      "Slack for the control plane's health checks on slow machines: the static pods' probes (kubeadm patches), kube-apiserver's etcd checks, HAProxy's checks of the API servers",
    ),
});

export const clusterSpecSchema = z.strictObject({
  apiVersion: z.literal(SPEC_API_VERSION),
  kind: z.literal('Cluster'),
  metadata: z.strictObject({ name: dnsLabel }),
  spec: z.strictObject({
    domain: dnsName.default('kubeinit.local'),
    kubernetes: kubernetes.prefault({}),
    containerRuntime: z
      .strictObject({ containerd: version('containerd').default(DEFAULT_CONTAINERD_LINE) })
      .prefault({}),
    network: network.prefault({}),
    cni: cni.prefault({}),
    infrastructure,
    nodes: nodes.optional(),
    services: services.prefault({}),
    proxy: proxy.optional(),
    mirrors: mirrors.prefault({}),
    downloads: z
      .record(z.string().min(1), downloadOverride)
      .default({})
      .describe(
        'Per-file pins and sources by download id (windows/flanneld.exe, linux/containerd.tar.gz, …), so a new release or an internal mirror needs no code change',
      ),
    windows: windows.optional(),
    verify: verify.optional(),
    airGapped: z
      .boolean()
      .default(false)
      .describe(
        'Nodes never reach the internet: every binary from the download cache and every image from the services registry (pushed by `kubemix up --images`), checked before any node is touched',
      ),
  }),
});

/** The spec as written (defaults not applied). */
export type ClusterSpecInput = z.input<typeof clusterSpecSchema>;
/** The spec after schema defaults. */
export type ClusterSpecParsed = z.output<typeof clusterSpecSchema>;
export type HypervisorSpec = z.output<typeof hypervisor>;
export type ExistingHostSpec = z.output<typeof existingHost>;
export type WorkerGroupSpec = z.output<typeof workerGroup>;
export type BastionSpec = z.output<typeof bastion>;

export function clusterJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(clusterSpecSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...schema, $id: 'https://kubemix.dev/schema/v1alpha1/cluster.json', title: 'kubemix Cluster spec' };
}
