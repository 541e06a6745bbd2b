// What lint needs to know about the target cluster. Deliberately small and
// independent of the cluster spec/model: the CLI builds one of these from the
// spec (`--cluster`), tests build them by hand.
import { WINDOWS, windowsRelease } from '../matrix/index.js';

/** One Windows node pool: its OS id, build and the RuntimeClass kubemix creates for it. */
export interface LintWindowsPool {
  readonly os: string;
  readonly build: string;
  /** Convention: named after the OS id (`windows-2022`), selects os, arch and windows-build, tolerates the taint. */
  readonly runtimeClass: string;
}

export interface WindowsTaint {
  readonly key: 'os';
  readonly value: 'windows';
  readonly effect: 'NoSchedule';
}

export interface LintCluster {
  readonly windows: readonly LintWindowsPool[];
  readonly hasLinux: boolean;
  readonly taint: WindowsTaint;
  /** kube-proxy on Windows runs with DSR (`enableDSR`); `externalTrafficPolicy: Local` then works. */
  readonly windowsDsr?: boolean;
}

/** kubemix taints every Windows node with this, the taint Kubernetes' Windows scheduling guide suggests. */
export const WINDOWS_TAINT: WindowsTaint = { key: 'os', value: 'windows', effect: 'NoSchedule' };

/** Without a cluster lint assumes the cluster kubemix exists for: Linux and Windows workers. */
export function isMixed(cluster: LintCluster | undefined): boolean {
  return cluster === undefined || (cluster.hasLinux && cluster.windows.length > 0);
}

/**
 * A LintCluster for Windows OS ids from the compatibility matrix
 * (`windows-2022`, `windows-2025`), with kubemix's RuntimeClass convention.
 */
export function lintClusterFor(
  windowsOs: readonly string[],
  options: { hasLinux?: boolean; windowsDsr?: boolean } = {},
): LintCluster {
  const windows = windowsOs.map((os) => {
    const release = windowsRelease(os);
    if (release === undefined) {
      throw new RangeError(`unknown Windows OS id ${os}; known: ${WINDOWS.map((w) => w.os).join(', ')}`);
    }
    return { os: release.os, build: release.build, runtimeClass: release.os };
  });
  return {
    windows,
    hasLinux: options.hasLinux ?? true,
    taint: WINDOWS_TAINT,
    ...(options.windowsDsr === undefined ? {} : { windowsDsr: options.windowsDsr }),
  };
}
