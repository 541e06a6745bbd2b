// Every container image the cluster runs, with the platforms its nodes pull:
// kubeadm's list for the release (kubeadm config images list: the control
// plane at the release's tag, etcd, CoreDNS and pause at the tags this
// minor's kubeadm names, from the matrix), containerd's sandbox image on
// every node (pause: Linux and each Windows build), the CNI's images, the
// Windows HostProcess pods' image (Microsoft's base image, or the spec's
// own), verify's probe images
// and the guard webhook's image. `kubemix images list` prints it, `images
// pull` fetches it, `up` pushes it into the services registry (air-gapped
// clusters) and checks nothing is missing before any node is touched. Pure.
import { IMAGES, KUBEMIX_IMAGE_REPOSITORY, WINDOWS, kubernetesRelease } from '../matrix/index.js';
import { VERSION } from '../version.js';
import type { ClusterModel } from './resolve.js';

export interface ClusterImage {
  /** The reference as the cluster names it (upstream's name: mirrors keep it). */
  readonly ref: string;
  /** Registry host as written in the reference (`registry.k8s.io`, `docker.io`). */
  readonly registry: string;
  /** Repository path on that registry (`library/busybox` on docker.io). */
  readonly repository: string;
  readonly tag?: string;
  /** `sha256:…` when the reference pins one. */
  readonly digest?: string;
  /** `linux/amd64`, `windows/amd64` (HostProcess: any build), `windows/amd64:10.0.20348` (one build). */
  readonly platforms: readonly string[];
  /** Who runs it, sorted: `kubeadm`, `containerd sandbox`, `flannel`, `verify`, `guard`, … */
  readonly usedBy: readonly string[];
}

const LINUX = 'linux/amd64';

/** `registry/path:tag@digest` split the way containerd does (Docker Hub names get docker.io and library/). */
export function splitImageRef(ref: string): Pick<ClusterImage, 'registry' | 'repository' | 'tag' | 'digest'> {
  const [name = '', digest] = ref.split('@');
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > slash ? name.slice(colon + 1) : undefined;
  const path = colon > slash ? name.slice(0, colon) : name;
  const first = path.split('/')[0] ?? '';
  const hasHost = path.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const registry = hasHost ? first : 'docker.io';
  let repository = hasHost ? path.slice(first.length + 1) : path;
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

/** The Windows platforms of the cluster's Windows nodes, one per build. */
function windowsPlatforms(model: ClusterModel): string[] {
  const builds = new Set(model.nodes.filter((n) => n.osFamily === 'windows').map((n) => n.windowsBuild ?? ''));
  return [...builds].sort().map((b) => `windows/amd64:${b}`);
}

export function clusterImages(model: ClusterModel): ClusterImage[] {
  const found = new Map<string, { platforms: Set<string>; usedBy: Set<string> }>();
  const add = (ref: string, platforms: readonly string[], usedBy: string): void => {
    if (platforms.length === 0) return;
    const entry = found.get(ref) ?? { platforms: new Set<string>(), usedBy: new Set<string>() };
    platforms.forEach((p) => entry.platforms.add(p));
    entry.usedBy.add(usedBy);
    found.set(ref, entry);
  };
  const v = model.versions;
  const windows = windowsPlatforms(model);
  const linuxNodes = model.nodes.some((n) => n.osFamily === 'linux' && n.role !== 'services');
  const kubeadm = kubernetesRelease(v.kubernetesMinor)?.kubeadmImages;
  if (linuxNodes && kubeadm !== undefined) {
    const repo = 'registry.k8s.io';
    for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'])
      add(`${repo}/${c}:v${v.kubernetes}`, [LINUX], 'kubeadm');
    add(`${repo}/etcd:${kubeadm.etcd}`, [LINUX], 'kubeadm');
    add(`${repo}/coredns/coredns:${kubeadm.coredns}`, [LINUX], 'kubeadm');
    // kubeadm's preflight pulls its own pause tag even where containerd's sandbox differs.
    add(`${repo}/pause:${kubeadm.pause}`, [LINUX], 'kubeadm');
  }
  add(`${IMAGES.pause.repository}:${v.pause}`, [...(linuxNodes ? [LINUX] : []), ...windows], 'containerd sandbox');
  if (model.overlay.plugin === 'flannel' && linuxNodes) {
    add(`${IMAGES.flannel.repository}:${IMAGES.flannel.tag}`, [LINUX], 'flannel');
    add(`${IMAGES.flannelCniPlugin.repository}:${IMAGES.flannelCniPlugin.tag}`, [LINUX], 'flannel');
  }
  const hostProcess = model.windowsHostProcess;
  if (hostProcess !== undefined && windows.length > 0) {
    // HostProcess containers run on any build (hcsshim's host process isolation).
    // With Calico, calico-node-windows brings its own; only flannel's HostProcess DaemonSet runs this image.
    if (model.overlay.plugin === 'flannel') add(hostProcess.flannelImage, ['windows/amd64'], 'flannel (HostProcess)');
    add(hostProcess.kubeProxyImage, ['windows/amd64'], 'kube-proxy (HostProcess)');
  }
  if (linuxNodes) add(model.probeImages['linux'] ?? '', [probePlatform('linux')], 'verify');
  for (const w of WINDOWS) {
    const build = `windows/amd64:${w.build}`;
    if (windows.includes(build)) add(model.probeImages[w.ltsc] ?? '', [build], 'verify');
  }
  if (linuxNodes) add(`${KUBEMIX_IMAGE_REPOSITORY}:${VERSION}`, [LINUX], 'guard');
  return [...found]
    .filter(([ref]) => ref !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([ref, e]) => ({
      ref,
      ...splitImageRef(ref),
      platforms: [...e.platforms].sort(),
      usedBy: [...e.usedBy].sort(),
    }));
}

/** Images whose registry the services registry stands in for (not one the spec mirrors elsewhere). */
export function imagesFromServicesRegistry(model: ClusterModel): ClusterImage[] {
  const elsewhere = new Set(model.mirrors.images.map((m) => m.registry));
  return clusterImages(model).filter((i) => !elsewhere.has(i.registry));
}

/** The upstream registries the services registry stands in for, sorted. */
export function mirroredRegistries(model: ClusterModel): string[] {
  return [...new Set(imagesFromServicesRegistry(model).map((i) => i.registry))].sort();
}

/** The platform verify's probe KEY runs on: linux, or the Windows build of an LTSC line. */
function probePlatform(key: string): string {
  const release = WINDOWS.find((w) => w.ltsc === key);
  return release === undefined ? LINUX : `windows/amd64:${release.build}`;
}

/**
 * The images as `--probe-image KEY=REF` changes them: verify's probe for KEY
 * is REF, so the image it replaces (the spec's or the matrix's, found by its
 * platform; plans read back from a file carry no model) is no longer needed,
 * unless something else runs it, and REF is. `overrides` comes checked from
 * parseProbeImageOverrides.
 */
export function withProbeImages(
  images: readonly ClusterImage[],
  overrides: Readonly<Record<string, string>>,
): ClusterImage[] {
  const out: ClusterImage[] = [];
  for (const i of images) {
    const key = Object.keys(overrides).find(
      (k) => i.usedBy.includes('verify') && i.platforms.includes(probePlatform(k)),
    );
    const ref = key === undefined ? undefined : overrides[key];
    if (ref === undefined) {
      out.push(i);
      continue;
    }
    const others = i.usedBy.filter((u) => u !== 'verify');
    if (others.length > 0) out.push({ ...i, usedBy: others });
    out.push({ ref, ...splitImageRef(ref), platforms: i.platforms, usedBy: ['verify'] });
  }
  return out;
}
