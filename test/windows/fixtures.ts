// Models for Windows tests, built through the real spec pipeline.
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { readSpec } from '../../src/spec/read.js';
import type { Plan } from '../../src/plan/types.js';

export interface Combo {
  readonly k8s: '1.34' | '1.35' | '1.36' | '1.37';
  readonly os: 'windows-2022' | 'windows-2025';
  readonly backend: 'vxlan' | 'host-gw';
  /** Adds a proxy and mirrors to the spec. */
  readonly mirrors?: boolean;
  /** flanneld and kube-proxy from the spec's own HostProcess images (spec.windows.hostProcess). */
  readonly hostProcess?: boolean;
  /** cni.plugin: calico (Tigera operator, calico-node-windows); flannel when absent. */
  readonly calico?: boolean;
}

/** The first-join order of a Windows worker's tasks on flannel (flanneld and kube-proxy as HostProcess pods). */
export const WINDOWS_TASK_ORDER = [
  'win-helpers',
  'win-preflight',
  'win-hosts-file',
  'win-containers-feature',
  'win-reboot',
  'win-hns-external',
  'win-containerd',
  'win-defender-exclusions',
  'win-binaries',
  'win-kubelet-service',
  'win-hostprocess-files',
  'win-kubeadm-join',
  'win-flannel-pod',
  'win-cni-config',
  'win-kube-proxy-pod',
  'win-retire-legacy',
  'win-firewall',
  'win-boot-order',
] as const;

/** Pairwise over minor × build × backend: every pair of values appears at least once. */
export const GOLDEN_COMBOS: readonly Combo[] = [
  { k8s: '1.34', os: 'windows-2022', backend: 'vxlan' },
  { k8s: '1.34', os: 'windows-2025', backend: 'host-gw' },
  { k8s: '1.36', os: 'windows-2022', backend: 'host-gw' },
  { k8s: '1.36', os: 'windows-2025', backend: 'vxlan', mirrors: true },
  { k8s: '1.37', os: 'windows-2022', backend: 'vxlan' },
  { k8s: '1.37', os: 'windows-2025', backend: 'host-gw' },
];

/** The first-join order of a Calico Windows worker's tasks: no External network, flanneld or CNI config of ours. */
export const CALICO_TASK_ORDER = [
  'win-helpers',
  'win-preflight',
  'win-hosts-file',
  'win-containers-feature',
  'win-reboot',
  'win-containerd',
  'win-defender-exclusions',
  'win-binaries',
  'win-kubelet-service',
  'win-hostprocess-files',
  'win-kubeadm-join',
  'win-calico-node',
  'win-kube-proxy-pod',
  'win-retire-legacy',
  'win-firewall',
  'win-boot-order',
] as const;

/**
 * Calico × Windows Server 2022 × the minors our Calico is checked on (2025 is
 * refused: Calico for Windows does not support it). 1.37 is outside Calico
 * 3.32's tested window: planned, with a warning.
 */
export const CALICO_COMBOS: readonly Combo[] = (['1.35', '1.36', '1.37'] as const).map((k8s) => ({
  k8s,
  os: 'windows-2022',
  backend: 'vxlan',
  calico: true,
}));

/** Golden files for the spec's own HostProcess images, beside the pairwise ones. */
export const HOSTPROCESS_COMBOS: readonly Combo[] = [
  { k8s: '1.36', os: 'windows-2022', backend: 'vxlan', hostProcess: true },
];

export function comboName(c: Combo): string {
  return `${c.k8s}-${c.os}-${c.calico === true ? 'calico-' : ''}${c.backend}${c.hostProcess === true ? '-hostprocess' : ''}`;
}

export function specText(c: Combo): string {
  const extra =
    c.mirrors === true
      ? `  proxy:
    https: http://proxy.example.com:3128
    noProxy: [example.com]
  mirrors:
    images:
      registry.k8s.io: mirror.example.com/k8s
    artifacts: https://artifacts.example.com/mirror
`
      : '';
  const windows =
    c.hostProcess === true
      ? `  windows:
    hostProcess:
      flannelImage: registry.example.com/flannel:v0.28.4-hostprocess
      kubeProxyImage: registry.example.com/kube-proxy:v${c.k8s}.0-hostprocess
`
      : '';
  return `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata:
  name: k8scluster
spec:
  kubernetes:
    version: "${c.k8s}"
  network:
    nodeCidr: 10.0.0.0/24
    podCidr: 10.244.0.0/16
    serviceCidr: 10.96.0.0/12
  cni:
    plugin: ${c.calico === true ? 'calico' : 'flannel'}
    backend: ${c.backend}
  infrastructure:
    driver: libvirt
    hypervisors:
      - name: hypervisor-01
        address: hv1.example.com
  nodes:
    controlPlane:
      count: 1
      distro: debian-13
    workers:
      - name: linux
        count: 1
        os: debian-13
      - name: win
        count: 1
        os: ${c.os}
${extra}${windows}`;
}

export function modelFor(c: Combo): ClusterModel {
  return resolveModel(readSpec({ kind: 'file', path: `${comboName(c)}.yaml`, text: specText(c) }));
}

/** The files a host's tasks upload, by remote path: what its scripts can dot-source. */
export function hostFiles(
  plan: Pick<Plan, 'tasks' | 'artifacts'>,
  files: readonly { readonly content: string }[],
  host: string,
): Map<string, string> {
  const index = new Map(plan.artifacts.map((a, i) => [a.id, { a, content: files[i]?.content ?? '' }]));
  const out = new Map<string, string>();
  for (const t of plan.tasks.filter((x) => x.host === host))
    for (const u of t.uploads) {
      const found = index.get(u.artifact);
      if (found !== undefined) out.set(found.a.remotePath, found.content);
    }
  return out;
}
