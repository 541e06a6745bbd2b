// kubeadm join on Windows. On worker joins kubeadm writes taints and kubelet
// extra args only to kubeadm-flags.env, which nothing reads on Windows, so
// everything the kubelet needs goes into JoinConfiguration `patches` (target
// kubeletconfiguration) or onto the service command line (kubeadm's
// cmd/kubeadm/app/phases/kubelet/flags.go writes the env file; only Linux's
// systemd drop-in reads it).
import { SECRET_NAMES } from '../../model/secret-names.js';
import { CALICO_WINDOWS, compareVersions } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { CONTAINERD_PIPE, WIN } from './paths.js';
import { yamlString } from '../../util/escape/index.js';
import { timeoutsBlock } from '../kubeadm/timeouts.js';

/** The name the node registers with: kubelet lower-cases it, flanneld must match. */
export function registeredName(node: PlanNode): string {
  return node.name.toLowerCase();
}

/** A YAML scalar (single-quoted where YAML allows). */
const y = yamlString;

export function joinConfiguration(model: ClusterModel, node: PlanNode): string {
  const api = model.cluster.apiEndpoint;
  const v1beta4 = model.versions.kubeadmApi === 'v1beta4';
  // kubeadm's defaults, written out, under the spec's own (spec.kubernetes.timeouts).
  const block = timeoutsBlock(model.kubeadm, { discovery: 300, tlsBootstrap: 300 }) ?? {};
  const timeouts = v1beta4
    ? `timeouts:\n${Object.entries(block)
        .map(([k, v]) => `  ${k}: ${v}\n`)
        .join('')}`
    : '';
  const discoveryTimeout = v1beta4 ? '' : '  timeout: 5m0s\n';
  return `apiVersion: kubeadm.k8s.io/${model.versions.kubeadmApi}
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: ${y(`${api.host}:${api.port}`)}
    token: ${y(`{{secret:${SECRET_NAMES.kubeadmToken}}}`)}
    caCertHashes:
      - ${y(`{{secret:${SECRET_NAMES.clusterCaCertHash}}}`)}
${discoveryTimeout}  tlsBootstrapToken: ${y(`{{secret:${SECRET_NAMES.kubeadmToken}}}`)}
nodeRegistration:
  name: ${y(registeredName(node))}
  criSocket: ${y(CONTAINERD_PIPE)}
  # Empty on purpose: taints given here land in kubeadm-flags.env, unread on Windows.
  taints: []
${ignoredPreflight(model)}patches:
  directory: ${y(WIN.patchesDir)}
${timeouts}`;
}

/** spec.kubernetes.ignorePreflightErrors under nodeRegistration, or nothing. */
function ignoredPreflight(model: ClusterModel): string {
  const names = model.kubeadm.ignorePreflightErrors;
  if (names === undefined) return '';
  return `  ignorePreflightErrors:\n${names.map((n) => `    - ${y(n)}\n`).join('')}`;
}

/** `key=value:Effect` → a KubeletConfiguration taint. */
function taint(text: string): string {
  const m = /^([^=:]+)(?:=([^:]*))?:(\w+)$/.exec(text);
  if (m === null) throw new Error(`malformed taint ${text}`);
  const value = m[2] === undefined ? '' : `\n    value: ${y(m[2])}`;
  return `  - key: ${y(m[1] ?? '')}${value}\n    effect: ${y(m[3] ?? '')}`;
}

/** JSON merge patch over the kubelet config kubeadm writes from the cluster ConfigMap. */
export function kubeletPatch(model: ClusterModel, node: PlanNode): string {
  if (compareVersions(model.versions.kubernetes, '1.34.0') < 0)
    throw new Error('kubemix renders Windows workers for Kubernetes 1.34 and later');
  const taints =
    node.taints.length === 0 ? 'registerWithTaints: []' : `registerWithTaints:\n${node.taints.map(taint).join('\n')}`;
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
${taints}
containerRuntimeEndpoint: ${y(CONTAINERD_PIPE)}
# Windows has no cgroups: the kubelet only warns about these, set them anyway.
cgroupsPerQOS: false
enforceNodeAllocatable: []
resolvConf: ''
${model.overlay.plugin === 'calico' ? CALICO_MAX_PODS : ''}`;
}

/** Calico for Windows: one IPAM block per node, 4 of its addresses reserved by Windows. */
const CALICO_MAX_PODS = `# Calico on Windows: one IPAM block (/${CALICO_WINDOWS.blockSize}) per node, ${CALICO_WINDOWS.reservedPerBlock} of its addresses reserved by Windows.
maxPods: ${2 ** (32 - CALICO_WINDOWS.blockSize) - CALICO_WINDOWS.reservedPerBlock}
`;

/** The kubelet service command line: kube-log-runner wraps kubelet for log files with rotation. */
export function kubeletCommandLine(node: PlanNode): string {
  const args = [
    `--config=${WIN.kubeletConfig}`,
    `--bootstrap-kubeconfig=${WIN.bootstrapKubeconfig}`,
    `--kubeconfig=${WIN.kubeletKubeconfig}`,
    `--cert-dir=${WIN.kubeletCertDir}`,
    `--hostname-override=${registeredName(node)}`,
    `--node-ip=${node.ip}`,
    '--windows-service',
  ];
  return logRunner('kubelet', args);
}

/**
 * kube-log-runner's rotation (k8s.io/component-base logs/kube-log-runner):
 * `-log-file-size` is a resource.Quantity in bytes (a bare 100 would rotate
 * at 100 bytes), `-log-file-age` a Go duration (no `d` unit); without an age
 * rotated files are never deleted. 100 MiB per file, kept one week.
 */
export const LOG_ROTATION = { size: '100Mi', age: '168h' } as const;

/** `"C:\k\bin\kube-log-runner.exe" -log-file=… "C:\k\bin\<exe>.exe" args…`, quoted for binPath. */
export function logRunner(exe: string, args: readonly string[]): string {
  const runner = [
    `"${WIN.bin}\\kube-log-runner.exe"`,
    `-log-file=${WIN.logs}\\${exe}\\${exe}.log`,
    `-log-file-size=${LOG_ROTATION.size}`,
    `-log-file-age=${LOG_ROTATION.age}`,
  ];
  return [...runner, `"${WIN.bin}\\${exe}.exe"`, ...args].join(' ');
}
