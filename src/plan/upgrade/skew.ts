// Which upgrades Kubernetes' version skew policy allows (kubernetes.io
// "Version Skew Policy"): kube-apiserver moves one minor at a time, so an
// upgrade may not skip a minor; a kubelet may never be newer than the API
// server; and the target release must support the cluster's containerd line
// and every Windows Server build a node runs (the compatibility matrix).
// Pure: the model's versions and the matrix in, a decision out.
import { InputError } from '../../errors.js';
import { KUBERNETES, WINDOWS_SUPPORT, compareVersions, type KubernetesRelease } from '../../matrix/index.js';
import { kubernetesVersionProblem } from '../../matrix/known-versions.js';
import type { PlanNode } from '../../model/types.js';

/** The matrix rows the decision reads (tests pass their own). */
export interface SkewMatrix {
  readonly kubernetes: readonly KubernetesRelease[];
  readonly windows: Readonly<Record<string, readonly string[]>>;
}

export const MATRIX: SkewMatrix = { kubernetes: KUBERNETES, windows: WINDOWS_SUPPORT };

/** What the cluster runs now and what the upgrade asks for. */
export interface UpgradeRequest {
  /** The spec's resolved Kubernetes version (`1.35.6`). */
  readonly current: string;
  /** `--to`, as written (`1.36` or `1.36.1`). */
  readonly to: string;
  /** The spec's resolved containerd version (`2.3.2`). */
  readonly containerd: string;
  readonly nodes: readonly Pick<PlanNode, 'name' | 'os' | 'osFamily'>[];
  /** A target an earlier, unfinished upgrade already moved nodes to (state directory), if any. */
  readonly inProgress?: string | undefined;
}

export interface UpgradeDecision {
  readonly from: string;
  /** The full target version (`--to 1.36` → the matrix's pinned patch). */
  readonly to: string;
  /** What `--to` becomes in the spec: as the user wrote it. */
  readonly specVersion: string;
  /** from === to: nothing to plan. */
  readonly upToDate: boolean;
}

export function minor(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

function refuse(message: string, hint: string): never {
  throw new InputError('upgrade.skew', message, { path: '--to', hint });
}

/** Decides an upgrade or throws `upgrade.skew` (exit 2) naming the rule it breaks. */
export function decideUpgrade(req: UpgradeRequest, matrix: SkewMatrix = MATRIX): UpgradeDecision {
  // Written as upstream tags releases, and a patch the matrix knows (1.36.000, 1.36.99: exit 2 here, not on a node).
  const written = kubernetesVersionProblem(req.to);
  if (written !== undefined)
    throw new InputError('flags.to', `--to: ${written.message}`, { path: '--to', hint: written.hint });
  const release = matrix.kubernetes.find((k) => k.minor === minor(req.to));
  if (release === undefined)
    refuse(
      `Kubernetes ${req.to} is not in kubemix's compatibility matrix`,
      `known minors: ${matrix.kubernetes.map((k) => k.minor).join(', ')}`,
    );
  const to = req.to.split('.').length === 3 ? req.to : release.patch;
  if (req.inProgress !== undefined && req.inProgress !== to)
    refuse(
      `an upgrade to ${req.inProgress} is unfinished; nodes already upgraded run kubelet ${req.inProgress}, ` +
        `and a kubelet must never be newer than the API server`,
      `finish it first: kubemix upgrade SPEC --to ${req.inProgress}`,
    );
  const order = compareVersions(to, req.current);
  const decision = { from: req.current, to, specVersion: req.to, upToDate: order === 0 };
  if (order === 0) return decision;
  if (order < 0)
    refuse(
      `${to} is older than the cluster's ${req.current}: kubeadm does not downgrade, and kubelets at ` +
        `${req.current} would be newer than the API server`,
      'restore from a backup (etcd snapshot) to go back',
    );
  const step = Number(minor(to).split('.')[1]) - Number(minor(req.current).split('.')[1]);
  if (step > 1)
    refuse(
      `${req.current} → ${to} skips ${step - 1} minor release(s); kube-apiserver may move one minor at a time`,
      `upgrade one minor at a time: --to ${minor(req.current).split('.')[0]}.${Number(minor(req.current).split('.')[1]) + 1}`,
    );
  checkSupport(req, release, matrix);
  return decision;
}

function checkSupport(req: UpgradeRequest, release: KubernetesRelease, matrix: SkewMatrix): void {
  const line = minor(req.containerd);
  if (!release.containerdLines.includes(line))
    refuse(
      release.containerdLines.length === 0
        ? `Kubernetes ${release.minor} has no confirmed containerd support yet; containerd ${req.containerd} may not work with it`
        : `Kubernetes ${release.minor} supports containerd ${release.containerdLines.join(', ')}, not ${req.containerd}`,
      'change spec.containerRuntime.containerd to a supported line with `kubemix up` first',
    );
  const builds = matrix.windows[release.minor] ?? [];
  for (const node of req.nodes.filter((n) => n.osFamily === 'windows')) {
    if (!builds.includes(node.os))
      refuse(
        `Kubernetes ${release.minor} does not support ${node.os}, which node ${node.name} runs`,
        `supported Windows builds for ${release.minor}: ${builds.join(', ') || 'none'}; replace the node first`,
      );
  }
}
