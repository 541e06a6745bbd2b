// kubeadm's v1beta4 `timeouts` as the spec sets them (spec.kubernetes.timeouts),
// and how long the executor lets a kubeadm command run given them: on a slow
// machine a user raises kubeadm's waits, and a task limit fixed below them
// would kill kubeadm while it still waits as told.
import type { KubeadmSettings, KubeadmTimeoutName } from '../../spec/types.js';

/** kubeadm's defaults (cmd/kubeadm/app/constants/constants.go, 1.35 and 1.36 alike), in seconds. */
export const KUBEADM_DEFAULT_TIMEOUTS: Readonly<Record<KubeadmTimeoutName, number>> = {
  controlPlaneComponentHealthCheck: 240,
  kubeletHealthCheck: 240,
  kubernetesAPICall: 60,
  etcdAPICall: 120,
  tlsBootstrap: 300,
  discovery: 300,
  upgradeManifests: 300,
};

/** Seconds as Go's time.Duration prints them (`1h0m0s`, `10m0s`, `1m30s`, `45s`): kubeadm reads any Go duration. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** The spec's timeouts as a v1beta4 `timeouts` block over `base`, keys sorted; undefined when empty. */
export function timeoutsBlock(
  settings: KubeadmSettings,
  base: Partial<Record<KubeadmTimeoutName, number>> = {},
): Record<string, string> | undefined {
  const merged = { ...base, ...settings.timeouts };
  const names = (Object.keys(KUBEADM_DEFAULT_TIMEOUTS) as KubeadmTimeoutName[])
    .filter((n) => merged[n] !== undefined)
    .sort();
  if (names.length === 0) return undefined;
  return Object.fromEntries(names.map((n) => [n, goDuration(merged[n] ?? 0)]));
}

/** One timeout in seconds: the spec's, else kubeadm's default. */
export function timeoutSeconds(settings: KubeadmSettings, name: KubeadmTimeoutName): number {
  return settings.timeouts[name] ?? KUBEADM_DEFAULT_TIMEOUTS[name];
}

/** kubemix's limit for a kubeadm command with kubeadm's default waits. */
const DEFAULT_TASK_SECONDS = 900;

/**
 * The executor's limit for a kubeadm command that may wait the named timeouts
 * one after another (a name counted as often as it is given): kubemix's
 * limit for kubeadm's defaults (`base`), plus whatever the spec adds to those waits.
 */
export function kubeadmTaskSeconds(
  settings: KubeadmSettings,
  waits: readonly KubeadmTimeoutName[],
  base = DEFAULT_TASK_SECONDS,
): number {
  const added = waits.reduce(
    (total, name) => total + Math.max(0, timeoutSeconds(settings, name) - KUBEADM_DEFAULT_TIMEOUTS[name]),
    0,
  );
  return base + added;
}
