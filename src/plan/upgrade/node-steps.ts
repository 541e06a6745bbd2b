// The host-side steps of one node's upgrade, after kubeadm's documented order
// (kubernetes.io "Upgrading kubeadm clusters", "Upgrading Linux nodes",
// "Upgrading Windows nodes"): kubeadm first, then `kubeadm upgrade apply` on
// the first control-plane node or `kubeadm upgrade node` elsewhere, then the
// kubelet binaries (on Windows also kube-proxy's and, with flannel, flanneld's,
// which their HostProcess pods run from the host) and a restart in the order
// the node needs.
// Linux nodes take the path the spec installs with: upstream's binaries from
// the services node's download cache (`spec.kubernetes.install: binaries`)
// or the signed pkgs.k8s.io repository of the target minor (`packages`);
// Windows binaries always from the download cache, each checked against the
// SHA256 the deployer verified.
import { CALICO_WINDOWS, URLS, linuxDistro } from '../../matrix/index.js';
import { clusterImages } from '../../model/images.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { APT_KEYRING } from '../../render/linux/kubernetes-repo.js';
import { downloadCache } from '../../model/downloads.js';
import { nodeDownloadScript } from '../tasks/download.js';
import { kubeBinaries } from '../tasks/kubernetes-binaries.js';
import { download, downloadFunction, fetchCall } from '../../render/windows/downloads.js';
import { binaries } from '../../render/windows/install.js';
import { WIN } from '../../render/windows/paths.js';
import { CALICO_ENDPOINT_FUNCTION, CALICO_READY, calicoWaitLoop } from '../../render/windows/calico.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from '../../render/windows/ps.js';
import { checkThat } from '../../render/windows/step.js';
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';
import type { CheckAndApply } from './api-steps.js';

export interface Scripts {
  readonly check: string;
  readonly apply: string;
}

function family(node: PlanNode): 'apt' | 'dnf' {
  return linuxDistro(node.os)?.family ?? 'apt';
}

/** Install `packages` at the model's version from the target minor's repository, held again after. */
function packageInstall(model: ClusterModel, node: PlanNode, packages: readonly string[]): ShellText {
  const v = model.versions.kubernetes;
  if (family(node) === 'dnf')
    return shell`set -eu\n${proxyExports(model)}dnf install -y -q --disableexcludes=kubernetes ${packages.map((p) => `${p}-${v}`)}`;
  return shell`set -eu
${proxyExports(model)}export DEBIAN_FRONTEND=noninteractive
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
curl -fsSL -o "$work/Release.key" ${`${URLS.kubernetesDeb(model.versions.kubernetesMinor)}Release.key`}
gpg --dearmor --yes -o ${APT_KEYRING} "$work/Release.key"
apt-get update -q
apt-mark unhold ${packages} >/dev/null
apt-get install -y -q ${packages.map((p) => `${p}=${v}-*`)}
apt-mark hold ${packages} >/dev/null`;
}

/** The release binaries (kubernetes-binaries.ts) as one script: each fetched and verified in its own subshell. */
function binaryInstall(model: ClusterModel, names: readonly string[]): ShellText {
  const cached = downloadCache(model) !== undefined;
  const wanted = kubeBinaries(model).filter((b) => names.includes(b.name));
  return shell`${cached ? shellCode('') : proxyExports(model)}${shellLines(
    wanted.map((b) => shell`(\n${nodeDownloadScript(model, b.id, b.install)}\n)`),
  )}`;
}

function binaryCheck(model: ClusterModel, name: string): ShellText {
  return kubeBinaries(model).find((b) => b.name === name)?.check ?? shellCode('false');
}

export function linuxKubeadm(model: ClusterModel, node: PlanNode): CheckAndApply {
  if (model.kubernetesInstall === 'binaries')
    return { check: binaryCheck(model, 'kubeadm'), apply: binaryInstall(model, ['kubeadm']) };
  return {
    check: shell`kubeadm version -o short 2>/dev/null | grep -qx 'v${model.versions.kubernetes}'`,
    apply: packageInstall(model, node, ['kubeadm']),
  };
}

/** Seconds a control plane may take to pull the target's images (run 37's emulated one: 6 min 19 s). */
export const IMAGE_PULL_SECONDS = 1800;

/**
 * The target's images as kubeadm names them (its `config images list`), pulled
 * through the node's CRI before the node is cordoned: `kubeadm upgrade apply`
 * and `upgrade node` pull them in their preflight otherwise, with the node
 * already cordoned and drained (run 37's emulated control plane: 6 min 19 s
 * of its 20 min apply). kubespray downloads ahead of an upgrade likewise.
 * Control planes only: the one image a worker's turn would pull, kube-proxy's,
 * is rolled out by `upgrade apply` on the first control plane before then.
 */
export function linuxImagePull(model: ClusterModel): CheckAndApply {
  const refs = clusterImages(model)
    .filter((i) => i.usedBy.includes('kubeadm'))
    .map((i) => i.ref);
  return {
    check: shell`for image in ${refs}; do crictl inspecti -q "$image" >/dev/null 2>&1 || exit 1; done`,
    apply: shell`set -eu
for image in ${refs}; do crictl pull "$image" >/dev/null; done`,
  };
}

/**
 * `kubeadm upgrade apply` (first control plane) or `kubeadm upgrade node` (every
 * other node); with `--config` when the spec's timeouts or probe slack need an
 * UpgradeConfiguration (`config`: its path on the node).
 */
export function linuxKubeadmUpgrade(
  model: ClusterModel,
  node: PlanNode,
  first: boolean,
  config?: string,
): CheckAndApply {
  const v = model.versions.kubernetes;
  // A control plane is through once its API server's static Pod runs the target image.
  const check =
    node.role === 'control-plane'
      ? shell`grep -Eq ${`image: .*/kube-apiserver:v${v.replace(/\./g, '\\.')}$`} /etc/kubernetes/manifests/kube-apiserver.yaml`
      : shell`kubelet --version 2>/dev/null | grep -qx 'Kubernetes v${v}'`;
  const verb = first ? shell`kubeadm upgrade apply 'v${v}' --yes` : shellCode('kubeadm upgrade node');
  const apply = config === undefined ? verb : shell`${verb} --config ${config}`;
  return { check, apply: shell`set -eu\n${apply}` };
}

export function linuxKubelet(model: ClusterModel, node: PlanNode): CheckAndApply {
  const v = model.versions.kubernetes;
  if (model.kubernetesInstall === 'binaries')
    return {
      check: shell`${binaryCheck(model, 'kubelet')} && ${binaryCheck(model, 'kubectl')} && systemctl is-active --quiet kubelet`,
      apply: shell`set -eu
${binaryInstall(model, ['kubelet', 'kubectl'])}
systemctl daemon-reload
systemctl restart kubelet`,
    };
  return {
    check: shell`kubelet --version 2>/dev/null | grep -qx 'Kubernetes v${v}' &&
  kubectl version --client 2>/dev/null | grep -q 'Client Version: v${v}$' &&
  systemctl is-active --quiet kubelet`,
    apply: shell`${packageInstall(model, node, ['kubelet', 'kubectl'])}
systemctl daemon-reload
systemctl restart kubelet`,
  };
}

const KUBELET_EXE = `${WIN.bin}\\kubelet.exe`;

function kubeletAt(v: string): string {
  return `(Test-Path -LiteralPath ${q(KUBELET_EXE)}) -and (& ${q(KUBELET_EXE)} --version) -eq ${q(`Kubernetes v${v}`)}`;
}

/**
 * The new kubeadm.exe, then `kubeadm upgrade node` with the node's kubelet
 * credentials (workers have no admin.conf) and the same kubelet patches the
 * join used, so the Windows settings survive the cluster's kubelet config;
 * the spec's preflight checks to ignore as a flag (no --config here).
 */
export function windowsKubeadmUpgrade(model: ClusterModel): Scripts {
  const kubeadm = `${WIN.bin}\\kubeadm.exe`;
  const names = model.kubeadm.ignorePreflightErrors;
  const ignore = names === undefined ? '' : ` --ignore-preflight-errors ${q(names.join(','))}`;
  return {
    check: checkThat(kubeletAt(model.versions.kubernetes)),
    apply: `${downloadFunction(model)}${fetchCall(model, download(model, 'kubeadm.exe'), 'file')}
Copy-Item -Force -LiteralPath $file -Destination ${q(kubeadm)}
& ${q(kubeadm)} upgrade node --kubeconfig ${q(WIN.kubeletKubeconfig)} --patches ${q(WIN.patchesDir)}${ignore}
if ($LASTEXITCODE -ne 0) { throw "kubeadm upgrade node exited $LASTEXITCODE" }
`,
  };
}

/**
 * Services in start order, stopped in reverse: containerd, then the kubelet,
 * which runs the pod network's pods (flanneld, or calico-node-windows) and
 * kube-proxy's.
 */
export function windowsServiceOrder(_model: ClusterModel): string[] {
  return ['containerd', 'kubelet'];
}

/** Seconds an upgrade waits for calico-node-windows to rebuild its network after the kubelet restarts. */
export const CALICO_RESTART_WAIT_SECONDS = 600;

/** The restart's start order as the plan describes it. */
export function windowsStartSteps(model: ClusterModel): string[] {
  return [
    ...windowsServiceOrder(model),
    ...(model.overlay.plugin === 'calico'
      ? [`HNS network ${CALICO_WINDOWS.network} and endpoint ${CALICO_WINDOWS.hostEndpoint} back`]
      : []),
    ...(model.windowsHostProcess?.fromImages === true
      ? []
      : [
          `the ${model.overlay.plugin === 'calico' ? 'kube-proxy pod' : 'kube-proxy and flanneld pods'} restarted on the new binaries`,
        ]),
  ];
}

/**
 * The HostProcess pods run host binaries the install step has just replaced
 * (moved aside, a new copy in place): ending their processes makes the
 * kubelet start the containers again, on the new files. Their images' own
 * binaries (fromImages) move with the DaemonSets instead.
 */
function restartPodBinaries(model: ClusterModel): string {
  if (model.windowsHostProcess?.fromImages === true) return '';
  const names = model.overlay.plugin === 'calico' ? ['kube-proxy'] : ['flanneld', 'kube-proxy'];
  return `foreach ($name in ${names.map(q).join(', ')}) {
  Get-Process -Name $name -ErrorAction SilentlyContinue | Where-Object { $_.Path -like ${q(`${WIN.bin}\\*`)} } | Stop-Process -Force
}
`;
}

/** Seconds the binaries step may take: the download cache and restarts, plus Calico's wait. */
export function windowsBinariesTimeout(model: ClusterModel): number {
  return 900 + (model.overlay.plugin === 'calico' ? CALICO_RESTART_WAIT_SECONDS : 0);
}

/**
 * Stop the services, replace the binaries (the install step's own script: the
 * cache, the hashes, its version stamp), start them again in order, each
 * Running before the next starts.
 */
export function windowsBinaries(model: ClusterModel): Scripts {
  const calico = model.overlay.plugin === 'calico';
  const install = binaries(model);
  const order = windowsServiceOrder(model);
  const running = order.map((s) => `(Get-Service -Name ${q(s)} -ErrorAction SilentlyContinue).Status -eq 'Running'`);
  // The install step's check is `checkThat(<its version stamp>)`: the same condition, joined with ours.
  const stamp = /^if \((.*)\) \{ exit 0 \}\nexit 1\n$/s.exec(install.check ?? '')?.[1];
  if (stamp === undefined) throw new Error('the Windows binaries check no longer has the checkThat shape');
  const functions = calico ? `${HNS_FUNCTIONS}${CALICO_ENDPOINT_FUNCTION}` : '';
  return {
    check: `${functions}${checkThat(
      [stamp, kubeletAt(model.versions.kubernetes), ...running, ...(calico ? [CALICO_READY] : [])].join(' -and '),
    )}`,
    apply: `${SERVICE_FUNCTIONS}${functions}${[...order]
      .reverse()
      .map((s) => `Stop-KubemixService -Name ${q(s)}`)
      .join('\n')}
${install.apply}${order
      .map(
        (s) => `Start-Service -Name ${q(s)}
(Get-Service -Name ${q(s)}).WaitForStatus('Running', [TimeSpan]::FromSeconds(120))`,
      )
      .join('\n')}
${restartPodBinaries(model)}${calico ? calicoWaitLoop(CALICO_RESTART_WAIT_SECONDS) : ''}`,
  };
}
