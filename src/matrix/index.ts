// The compatibility matrix: every version, image tag and URL pattern kubemix
// depends on lives here and nowhere else. Versions drift; when upstream ships
// a release, this is the one file to change (and the golden files that follow).
//
// Sources: the Kubernetes release history (kubernetes.io/releases), containerd's
// RELEASES.md (support table, Kubernetes compatibility), Microsoft's Windows
// Server release information (builds) and upstream release notes as of
// 2026-06 for patch versions. `confirmed: false` marks rows upstream has not published yet.
import { cloudImageId } from './cloud-images.js';
import { INSTALL_ISOS, installIsoId } from './install-isos.js';

export { CLOUD_IMAGES, cloudImageId, type CloudImage } from './cloud-images.js';
export { INSTALL_ISOS, installIsoId, VIRTIO_WIN, type InstallIso } from './install-isos.js';

export interface KubernetesRelease {
  readonly minor: string;
  /** The patch release kubemix pins for this minor. */
  readonly patch: string;
  readonly released: string;
  /** End of life (upstream support ends), ISO date. */
  readonly endOfLife: string;
  /** kubeadm config API versions this minor accepts, preferred first. */
  readonly kubeadmApis: readonly ('v1beta4' | 'v1beta3')[];
  /** containerd lines upstream lists for this minor; empty when it has no row yet. */
  readonly containerdLines: readonly string[];
  /**
   * The image tags this minor's kubeadm names by default (cmd/kubeadm/app/constants/constants.go:
   * DefaultEtcdVersion, CoreDNSVersion, PauseVersion), read from the release named in `source`.
   * `kubeadm config images list` prints exactly these beside the control-plane images.
   */
  readonly kubeadmImages: {
    readonly etcd: string;
    readonly coredns: string;
    readonly pause: string;
    readonly source: string;
  };
  /**
   * cri-tools (crictl) for this minor: cri-tools releases one minor per Kubernetes minor and its
   * README asks for the matching one (older or newer ones speak the same CRI v1 API).
   */
  readonly crictl: string;
}

export const KUBERNETES: readonly KubernetesRelease[] = [
  {
    minor: '1.34',
    patch: '1.34.9',
    released: '2025-08-27',
    endOfLife: '2026-10-27',
    kubeadmApis: ['v1beta4', 'v1beta3'],
    containerdLines: ['2.2', '2.3'],
    kubeadmImages: { etcd: '3.6.5-0', coredns: 'v1.12.1', pause: '3.10.1', source: 'kubeadm v1.34.4' },
    crictl: '1.34.0',
  },
  {
    minor: '1.35',
    patch: '1.35.6',
    released: '2025-12-17',
    endOfLife: '2027-02-28',
    kubeadmApis: ['v1beta4', 'v1beta3'],
    containerdLines: ['2.2', '2.3'],
    kubeadmImages: { etcd: '3.6.6-0', coredns: 'v1.13.1', pause: '3.10.1', source: 'kubeadm v1.35.4' },
    crictl: '1.35.0',
  },
  // kubeadm 1.36 removed v1beta3 (kubernetes/kubernetes#136016, deprecated since 1.31; migrate with the 1.35 binary).
  {
    minor: '1.36',
    patch: '1.36.3',
    released: '2026-04-22',
    endOfLife: '2027-06-28',
    kubeadmApis: ['v1beta4'],
    containerdLines: ['2.2', '2.3'],
    kubeadmImages: { etcd: '3.6.8-0', coredns: 'v1.14.2', pause: '3.10.2', source: 'kubeadm v1.36.3' },
    crictl: '1.36.0',
  },
  {
    minor: '1.37',
    patch: '1.37.2',
    released: '2026-08-26',
    endOfLife: '2027-10-28',
    kubeadmApis: ['v1beta4'],
    containerdLines: [],
    kubeadmImages: { etcd: '3.7.0-0', coredns: 'v1.14.6', pause: '3.10.2', source: 'kubeadm v1.37.2' },
    crictl: '1.37.0',
  },
];

/** The newest minor whose containerd support upstream has confirmed. */
export const DEFAULT_KUBERNETES_MINOR = '1.36';

export interface ContainerdLine {
  readonly line: string;
  readonly patch: string;
  /**
   * `config.toml` schema version this line writes (containerd's version.ConfigVersion: 2.0–2.2
   * version 3; 2.3 version 4, the server's grpc/ttrpc/debug/metrics moved into plugin blocks). An
   * older version still loads, but containerd migrates it and warns on every start.
   */
  readonly configVersion: 3 | 4;
  readonly endOfLife: string;
  readonly lts: boolean;
}

export const CONTAINERD: readonly ContainerdLine[] = [
  { line: '2.2', patch: '2.2.5', configVersion: 3, endOfLife: '2026-11-30', lts: false },
  { line: '2.3', patch: '2.3.2', configVersion: 4, endOfLife: '2028-04-30', lts: true },
];
export const DEFAULT_CONTAINERD_LINE = '2.3';

/** containerd lines kubemix knows but refuses, with why. */
export const RETIRED_CONTAINERD: Readonly<Record<string, string>> = {
  '1.6': 'containerd 1.6 reached end of life and current Kubernetes does not support it',
  '1.7': 'containerd 1.7 reached end of life in 2026-09 and Kubernetes 1.36+ does not support it',
  '2.0': 'containerd 2.0 reached end of life',
  '2.1': 'containerd 2.1 reached end of life',
};

export interface WindowsRelease {
  readonly os: 'windows-2022' | 'windows-2025';
  readonly build: string;
  /** Container image tag family whose `os.version` matches the build. */
  readonly ltsc: string;
  /** Lowest pause image version that ships a layer for this build. */
  readonly minPause: string;
  /** Folder of this build's drivers on the virtio-win media (`viostor\<dir>\amd64`). */
  readonly virtioDir: string;
  /** `/IMAGE/NAME` of the install.wim images unattended installs pick (Datacenter). */
  readonly images: { readonly core: string; readonly desktop: string };
}

export const WINDOWS: readonly WindowsRelease[] = [
  {
    os: 'windows-2022',
    build: '10.0.20348',
    ltsc: 'ltsc2022',
    minPause: '3.6',
    virtioDir: '2k22',
    images: { core: 'Windows Server 2022 SERVERDATACENTERCORE', desktop: 'Windows Server 2022 SERVERDATACENTER' },
  },
  {
    os: 'windows-2025',
    build: '10.0.26100',
    ltsc: 'ltsc2025',
    minPause: '3.10.2',
    virtioDir: '2k25',
    images: { core: 'Windows Server 2025 SERVERDATACENTERCORE', desktop: 'Windows Server 2025 SERVERDATACENTER' },
  },
];

/**
 * Windows Server builds each Kubernetes minor supports for nodes (kubernetes.io
 * "Windows containers in Kubernetes", compatibility section: LTSC 2022 and 2025
 * for the minors listed here). `kubemix upgrade` refuses a target that drops a
 * build a node runs.
 */
export const WINDOWS_SUPPORT: Readonly<Record<string, readonly WindowsRelease['os'][]>> = {
  '1.34': ['windows-2022', 'windows-2025'],
  '1.35': ['windows-2022', 'windows-2025'],
  '1.36': ['windows-2022', 'windows-2025'],
  '1.37': ['windows-2022', 'windows-2025'],
};

/** Linux distributions kubemix deploys on, with the package family they use. */
export interface LinuxDistro {
  readonly id: string;
  readonly family: 'apt' | 'dnf';
  /** Short name accepted in Kubeinit node overrides (`os=debian`). */
  readonly alias?: string;
  /** `ID` and `VERSION_ID` in the host's /etc/os-release. */
  readonly osRelease: { readonly id: string; readonly versionId: string };
}

export const LINUX_DISTROS: readonly LinuxDistro[] = [
  { id: 'debian-12', family: 'apt', osRelease: { id: 'debian', versionId: '12' } },
  { id: 'debian-13', family: 'apt', alias: 'debian', osRelease: { id: 'debian', versionId: '13' } },
  { id: 'ubuntu-24.04', family: 'apt', alias: 'ubuntu', osRelease: { id: 'ubuntu', versionId: '24.04' } },
  { id: 'centos-stream-9', family: 'dnf', osRelease: { id: 'centos', versionId: '9' } },
  { id: 'centos-stream-10', family: 'dnf', alias: 'centos', osRelease: { id: 'centos', versionId: '10' } },
  { id: 'fedora-43', family: 'dnf', osRelease: { id: 'fedora', versionId: '43' } },
  { id: 'fedora-44', family: 'dnf', alias: 'fedora', osRelease: { id: 'fedora', versionId: '44' } },
];
export const DEFAULT_LINUX_DISTRO = 'debian-13';

export const IMAGES = {
  pause: { repository: 'registry.k8s.io/pause', tag: '3.10.2' },
  /**
   * Microsoft's HostProcess container base image (a few KB, no OS-version match
   * needed: kubernetes.io "Create a Windows HostProcess Pod"). kubemix's
   * Windows flanneld and kube-proxy pods run it with the SHA256-verified host
   * binaries kubemix installs under C:\k\bin. Digest as pinned for tag v1.0.0
   * by Azure/azure-container-networking (cns/Dockerfile, its own comment
   * names the tag); not pulled here.
   */
  hostProcessBase: {
    repository: 'mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image',
    tag: 'v1.0.0',
    digest: 'sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b',
  },
  flannel: { repository: 'ghcr.io/flannel-io/flannel', tag: 'v0.28.4' },
  flannelCniPlugin: { repository: 'ghcr.io/flannel-io/flannel-cni-plugin', tag: 'v1.9.0-flannel1' },
} as const;

/** kubemix's own image (the guard webhook), tagged with kubemix's version. */
export const KUBEMIX_IMAGE_REPOSITORY = 'ghcr.io/kubemix/kubemix';

export const COMPONENTS = {
  flannel: '0.28.4',
  runc: '1.4.2',
  cniPlugins: '1.9.0',
  windowsContainerNetworking: '0.3.1',
} as const;

/** Calico via the Tigera operator (`cni.plugin: calico`): the manifests its docs apply, in order; Typha's port. */
export const CALICO = {
  version: '3.32.2',
  manifests: ['operator-crds.yaml', 'tigera-operator.yaml'],
  typhaPort: 5473,
  /**
   * Kubernetes minors Calico 3.32 is tested against (docs.tigera.io, Calico 3.32 "System
   * requirements for Kubernetes": 1.34, 1.35, 1.36). Other minors in our matrix get a warning.
   */
  testedKubernetes: ['1.34', '1.35', '1.36'],
} as const;

/**
 * Calico for Windows (operator install, HostProcess pods calico-node-windows in
 * calico-system), Calico 3.32. Windows builds: tigera/docs
 * calico/getting-started/kubernetes/windows-calico/requirements.mdx lists Windows
 * Server 1809 (build 17763.1432+) and 2022 (build 20348.169+). Windows Server 2025
 * is not supported: projectcalico/calico#11691 "Add Windows Server 2025 Support" is
 * open (last read 2026-11, comments of 2026-09 still ask), and Rancher's WS2025
 * work (rancher/rancher#50915) is "blocked by upstream", i.e. Calico.
 */
export const CALICO_WINDOWS = {
  /** Builds (of WINDOWS) Calico for Windows supports; a Windows worker on another is refused. */
  builds: ['windows-2022'] as readonly WindowsRelease['os'][],
  unsupported: {
    'windows-2025':
      'Calico 3.32 for Windows supports Windows Server 2019 (1809) and 2022 only; Windows Server 2025 (build 10.0.26100) support is still open upstream (projectcalico/calico#11691)',
  } as Readonly<Partial<Record<WindowsRelease['os'], string>>>,
  /**
   * The HNS network calico-node-windows creates for VXLAN pods (its felix matches
   * KUBE_NETWORK "Calico.*": node/windows-packaging/CalicoWindows/config-hpc.ps1) and the
   * host endpoint on it whose address kube-proxy uses as source VIP
   * (kubernetes-sigs/sig-windows-tools hostprocess/calico/kube-proxy/start.ps1).
   */
  network: 'Calico',
  hostEndpoint: 'Calico_ep',
  /** The CNI config calico-node-windows' install-cni writes (cni-plugin/pkg/install/install.go default name). */
  cniConfName: '10-calico.conflist',
  /** The kubeconfig install-cni writes beside it, for calico.exe. */
  cniKubeconfigName: 'calico-kubeconfig',
  /** Registry key node-service.ps1 keeps its last boot time in (libs/calico/calico.psm1). */
  registryKey: 'HKLM:\\Software\\Tigera\\Calico',
  /**
   * Calico's IPAM block size (kubemix's pool) and the addresses Windows reserves in each
   * block a Windows node owns; kube-proxy on Windows supports one block per node, so a
   * Windows node holds at most 2^(32-26) - 4 = 60 pods (tigera/docs windows-calico/limitations.mdx,
   * "IPs reserved for Windows", "Single IP block per host").
   */
  blockSize: 26,
  reservedPerBlock: 4,
  /** Install root the HostProcess install and uninstall scripts use (node/windows-packaging/host-process-install.ps1). */
  rootDir: 'C:\\CalicoWindows',
} as const;

/** Why Calico cannot run on this Windows build, or undefined when it can. */
export function calicoWindowsRefusal(os: string): string | undefined {
  if ((CALICO_WINDOWS.builds as readonly string[]).includes(os)) return undefined;
  return CALICO_WINDOWS.unsupported[os as WindowsRelease['os']] ?? `Calico for Windows does not support ${os}`;
}

/** URL patterns of upstream artifacts (mirrors in the spec replace the origin). */
export const URLS = {
  kubernetesDeb: (minor: string) => `https://pkgs.k8s.io/core:/stable:/v${minor}/deb/`,
  kubernetesRpm: (minor: string) => `https://pkgs.k8s.io/core:/stable:/v${minor}/rpm/`,
  windowsBinary: (version: string, name: string) => `https://dl.k8s.io/v${version}/bin/windows/amd64/${name}.exe`,
  /** Each with `<url>.sha256` beside it (a lone hash). */
  linuxBinary: (version: string, name: string) => `https://dl.k8s.io/v${version}/bin/linux/amd64/${name}`,
  crictl: (version: string) =>
    `https://github.com/kubernetes-sigs/cri-tools/releases/download/v${version}/crictl-v${version}-linux-amd64.tar.gz`,
  containerd: (version: string, os: 'linux' | 'windows') =>
    `https://github.com/containerd/containerd/releases/download/v${version}/containerd-${version}-${os}-amd64.tar.gz`,
  runc: (version: string) => `https://github.com/opencontainers/runc/releases/download/v${version}/runc.amd64`,
  cniPlugins: (version: string) =>
    `https://github.com/containernetworking/plugins/releases/download/v${version}/cni-plugins-linux-amd64-v${version}.tgz`,
  calicoManifest: (version: string, name: string) =>
    `https://raw.githubusercontent.com/projectcalico/calico/v${version}/manifests/${name}`,
} as const;

/** Windows-only components (each from its upstream release page). */
export const WINDOWS_COMPONENTS = {
  flannelCniPlugin: IMAGES.flannelCniPlugin.tag.slice(1),
} as const;

/**
 * How a download is verified: `sidecar` — the deployer fetches the checksum
 * file upstream publishes beside the asset (first token of the line naming
 * the file, or of the first line) before it uses the file; `pinned` carries
 * the hash here, with `source` saying who publishes it. A pinned `null` means
 * no trustworthy published hash is known: planning fails (exit 2) until the
 * spec pins it (`spec.downloads.<id>.sha256`), so no run can reach a node
 * that would refuse the file.
 */
export type Checksum =
  | { readonly kind: 'sidecar'; readonly url: string }
  | { readonly kind: 'pinned'; readonly sha256: string | null; readonly source?: string };

/** A file a node installs, as the matrix knows it for one release. */
export interface NodeDownload {
  /** Stable key, the same across versions (`windows/kubelet.exe`): `spec.downloads.<id>` overrides it. */
  readonly id: string;
  /** Cache and log name (`kubelet.exe`, `containerd.tar.gz`). */
  readonly name: string;
  readonly version: string;
  readonly url: string;
  readonly checksum: Checksum;
}
/** Kept for the Windows renderers: every Windows download is a NodeDownload. */
export type WindowsDownload = NodeDownload;

const sidecar = (url: string, suffix: string): Checksum => ({ kind: 'sidecar', url: `${url}${suffix}` });

/**
 * Hashes of single files upstream publishes no checksum for, each copied
 * from a project that pins the same URL, with where it was read.
 */
const PINNED = {
  // rancher/rke2 Dockerfile.windows (commit 51288cd1730e517482451d8e17e8c9810ae2cc03, 2026-06-03)
  // pins flannel-io/flannel v0.28.4 flanneld.exe by this SHA256 (`sha256sum -c`).
  flanneld: {
    version: '0.28.4',
    sha256: 'd5dd439bdd9e1adb04b715d3d4c15ddc1e59e7cd1bd7ab2a3d77a4aeca23429b',
    source: 'rancher/rke2 Dockerfile.windows@51288cd1',
  },
  // microsoft/windows-container-networking v0.3.1 publishes no checksum; hash recorded from a signed third-party manifest.
  wcn: {
    version: '0.3.1',
    sha256: '4f36ee6905ada238ca2a9e1bfb8a1fb2912c2d88c4b6e5af4c41a42db70d7d68',
    source: 'third-party signed manifest',
  },
} as const;

/** The matrix's pin for a component, or null when the version differs from the one the hash is for. */
function pin(
  p: { readonly version: string; readonly sha256: string; readonly source: string },
  version: string,
): Checksum {
  return version === p.version
    ? { kind: 'pinned', sha256: p.sha256, source: p.source }
    : { kind: 'pinned', sha256: null };
}

/** Every file a Windows worker downloads, for one Kubernetes and containerd release. */
export function windowsDownloads(kubernetes: string, containerd: string): NodeDownload[] {
  const k8s = (name: string): NodeDownload => {
    const url = URLS.windowsBinary(kubernetes, name);
    return {
      id: `windows/${name}.exe`,
      name: `${name}.exe`,
      version: kubernetes,
      url,
      checksum: sidecar(url, '.sha256'),
    };
  };
  const ctr = URLS.containerd(containerd, 'windows');
  const cni = `https://github.com/containernetworking/plugins/releases/download/v${COMPONENTS.cniPlugins}/cni-plugins-windows-amd64-v${COMPONENTS.cniPlugins}.tgz`;
  const fcni = `https://github.com/flannel-io/cni-plugin/releases/download/v${WINDOWS_COMPONENTS.flannelCniPlugin}/cni-plugin-flannel-windows-amd64-v${WINDOWS_COMPONENTS.flannelCniPlugin}.tgz`;
  const wcn = `https://github.com/microsoft/windows-container-networking/releases/download/v${COMPONENTS.windowsContainerNetworking}/windows-container-networking-cni-amd64-v${COMPONENTS.windowsContainerNetworking}.zip`;
  const win = (name: string, version: string, url: string, checksum: Checksum): NodeDownload => ({
    id: `windows/${name}`,
    name,
    version,
    url,
    checksum,
  });
  return [
    k8s('kubelet'),
    k8s('kubeadm'),
    k8s('kube-proxy'),
    k8s('kube-log-runner'),
    win('containerd.tar.gz', containerd, ctr, sidecar(ctr, '.sha256sum')),
    win('cni-plugins.tgz', COMPONENTS.cniPlugins, cni, sidecar(cni, '.sha256')),
    win('flannel-cni-plugin.tgz', WINDOWS_COMPONENTS.flannelCniPlugin, fcni, sidecar(fcni, '.sha256')),
    win(
      'windows-container-networking.zip',
      COMPONENTS.windowsContainerNetworking,
      wcn,
      pin(PINNED.wcn, COMPONENTS.windowsContainerNetworking),
    ),
    win(
      'flanneld.exe',
      COMPONENTS.flannel,
      `https://github.com/flannel-io/flannel/releases/download/v${COMPONENTS.flannel}/flanneld.exe`,
      pin(PINNED.flanneld, COMPONENTS.flannel),
    ),
  ];
}

/**
 * kubeadm, kubelet and kubectl of one release and the matching crictl, as a Linux node installs
 * them from upstream's release (`spec.kubernetes.install: binaries`): dl.k8s.io publishes
 * `<file>.sha256` beside each binary, cri-tools `<archive>.sha256` beside its archive.
 */
export function linuxKubernetesDownloads(kubernetes: string, crictl: string): NodeDownload[] {
  const bin = (name: string): NodeDownload => {
    const url = URLS.linuxBinary(kubernetes, name);
    return { id: `linux/${name}`, name, version: kubernetes, url, checksum: sidecar(url, '.sha256') };
  };
  const cri = URLS.crictl(crictl);
  return [
    bin('kubeadm'),
    bin('kubelet'),
    bin('kubectl'),
    { id: 'linux/crictl.tar.gz', name: 'crictl.tar.gz', version: crictl, url: cri, checksum: sidecar(cri, '.sha256') },
  ];
}

/** Every file a Linux node downloads besides the Kubernetes binaries (linuxKubernetesDownloads). */
export function linuxDownloads(containerd: string, runc: string, cniPlugins: string): NodeDownload[] {
  const ctr = URLS.containerd(containerd, 'linux');
  const rc = URLS.runc(runc);
  const cni = URLS.cniPlugins(cniPlugins);
  return [
    {
      id: 'linux/containerd.tar.gz',
      name: 'containerd.tar.gz',
      version: containerd,
      url: ctr,
      checksum: sidecar(ctr, '.sha256sum'),
    },
    {
      id: 'linux/runc',
      name: 'runc',
      version: runc,
      url: rc,
      checksum: { kind: 'sidecar', url: CHECKSUM_URLS.runc(rc) },
    },
    {
      id: 'linux/cni-plugins.tgz',
      name: 'cni-plugins.tgz',
      version: cniPlugins,
      url: cni,
      checksum: sidecar(cni, '.sha256'),
    },
  ];
}

/**
 * Where upstream publishes the sha256 of each Linux download: files of
 * `<digest>  <name>` lines. Pinned digests (RELEASE_SHA256) win over these.
 */
export const CHECKSUM_URLS = {
  containerd: (url: string) => `${url}.sha256sum`,
  runc: (url: string) => `${url.slice(0, url.lastIndexOf('/'))}/runc.sha256sum`,
  cniPlugins: (url: string) => `${url}.sha256`,
  /** Attached to each Calico release; a file it does not list is refused until RELEASE_SHA256 pins it. */
  calico: (version: string) => `https://github.com/projectcalico/calico/releases/download/v${version}/SHA256SUMS`,
} as const;

/** Every download id a spec may override, for any release. */
export const DOWNLOAD_IDS: readonly string[] = [
  ...[...linuxDownloads('0', '0', '0'), ...linuxKubernetesDownloads('0', '0'), ...windowsDownloads('0', '0')].map(
    (d) => d.id,
  ),
  ...LINUX_DISTROS.map((d) => cloudImageId(d.id)),
  ...Object.keys(INSTALL_ISOS).map(installIsoId),
];

/**
 * sha256 of release downloads, by URL, recorded when a release is reviewed.
 * Empty until the matrix reviewer records them; downloads then verify against
 * the checksum file upstream publishes beside each release (CHECKSUM_URLS).
 */
export const RELEASE_SHA256: Readonly<Record<string, string>> = {};

/**
 * The "External" HNS network every Windows node gets, as Microsoft's
 * sig-windows-tools and Kubernetes' GCE Windows scripts create it.
 */
export const WINDOWS_EXTERNAL_HNS_CIDR = '192.168.255.0/30';

/** flannel vxlan settings Windows requires; used from the start on every cluster. */
export const FLANNEL_VXLAN = { vni: 4096, port: 4789 } as const;

/** Bytes of encapsulation each overlay adds to a packet. */
export const OVERHEAD = { vxlan: 50 } as const;

export function kubernetesRelease(minor: string): KubernetesRelease | undefined {
  return KUBERNETES.find((k) => k.minor === minor);
}

export function containerdLine(line: string): ContainerdLine | undefined {
  return CONTAINERD.find((c) => c.line === line);
}

export function windowsRelease(os: string): WindowsRelease | undefined {
  return WINDOWS.find((w) => w.os === os);
}

export function linuxDistro(id: string): LinuxDistro | undefined {
  return LINUX_DISTROS.find((d) => d.id === id);
}

/** Compare dotted version strings numerically (`3.10.2` > `3.6`). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * The day this matrix was last reviewed. Support status (end of life) is
 * judged against it, not the clock, so the same spec always validates the
 * same way; reviewing the matrix moves it.
 */
export const MATRIX_DATE = '2026-11-22';

/**
 * The services node (Kubeinit's services pod as a host): ports Kubeinit uses
 * and the Debian packages that carry each service. The registry is the CNCF
 * distribution registry, packaged by Debian as `docker-registry`.
 */
export const SERVICES = {
  haproxyStatsPort: 9000,
  registryPort: 5000,
  /** The download cache's HTTPS port (nginx): nodes fetch every binary here, by SHA256. */
  filesPort: 8443,
  registryUser: 'kubemix',
  /** Days the registry's serving certificate stays valid; renewed by re-running the task. */
  registryCertDays: 397,
  aptPackages: ['apache2-utils', 'bind9', 'bind9-utils', 'dnsmasq', 'docker-registry', 'haproxy', 'openssl'],
} as const;

/**
 * Images of `kubemix verify`'s probe pods. Linux: BusyBox (sh, httpd, wget,
 * nslookup, nc). Windows: Server Core of the node's LTSC line (process
 * isolation needs the container's OS build to match the host's; PowerShell
 * 5.1 and .NET are in it), keyed by `WindowsRelease.ltsc`. containerd pulls
 * them through the cluster's registry mirrors; `--probe-image KEY=REF`
 * overrides them.
 *
 * Pinned by digest only where an upstream record states it: busybox:1.37.0's
 * image index digest as Docker's official-images build published it
 * (docker-library/repo-info, repos/busybox/remote/1.37.0.md: BusyBox 1.37.0,
 * glibc, on Debian 13, the build of May 2026). Microsoft republishes the
 * Server Core tags every month and no upstream record of their digests was
 * at hand, so those are pinned by tag only.
 */
/** How long verify waits for its probe pods to start, unless spec.verify.podStartTimeout says otherwise. */
export const VERIFY_POD_START_SECONDS = 300;

export const VERIFY_PROBE_IMAGES: Readonly<Record<string, string>> = {
  linux: 'docker.io/library/busybox:1.37.0@sha256:9db7b59979c38555a39def84a31fb98b5296952f9e3afd4f6f11f05b07adfab0',
  ltsc2022: 'mcr.microsoft.com/windows/servercore:ltsc2022',
  ltsc2025: 'mcr.microsoft.com/windows/servercore:ltsc2025',
};
