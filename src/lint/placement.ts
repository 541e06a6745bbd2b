// Where a pod spec says it may run. Kubernetes has several ways to say it:
// a `kubernetes.io/os` nodeSelector or required node affinity, a
// windows-build selector, and a RuntimeClass whose scheduling block adds
// selectors and tolerations. `spec.os.name` says which OS the pod is for, but
// only the API server's validation and the kubelet's admission read it: the
// scheduler and the DaemonSet controller do not (Kubernetes docs, "Pods":
// "Pod OS"), so on its own it places nothing.
import type { LintCluster, WindowsTaint } from './cluster.js';
import { WINDOWS_TAINT } from './cluster.js';
import type { PodOs } from './image-os.js';
import { asArray, asMap, asString, stringEntries, type JsonMap, type NodePath } from './values.js';

export type PlacementVia = 'os.name' | 'nodeSelector' | 'nodeAffinity' | 'windows-build' | 'runtimeClassName';

export interface PlacementSignal {
  readonly os: PodOs;
  readonly via: PlacementVia;
  /** Path from the pod spec. */
  readonly path: NodePath;
}

export interface Placement {
  readonly signals: readonly PlacementSignal[];
  /** The OS every signal agrees on; undefined when none says or they disagree. */
  readonly os: PodOs | undefined;
  readonly conflict: boolean;
  readonly osName: PodOs | undefined;
  readonly runtimeClassName: string | undefined;
  /** The Windows pool the RuntimeClass belongs to, when the cluster knows it. */
  readonly runtimeClassBuild: string | undefined;
  readonly windowsBuild: string | undefined;
  /**
   * Something the scheduler reads pins the OS (nodeSelector, required node
   * affinity, windows-build selector), or a RuntimeClass that does or that
   * lint cannot interpret. `spec.os.name` alone does not count.
   */
  readonly placed: boolean;
}

const OS_LABELS = ['kubernetes.io/os', 'beta.kubernetes.io/os'];
export const WINDOWS_BUILD_LABEL = 'node.kubernetes.io/windows-build';

function asOs(value: unknown): PodOs | undefined {
  return value === 'linux' || value === 'windows' ? value : undefined;
}

export function analysePlacement(spec: JsonMap, cluster: LintCluster | undefined): Placement {
  const signals: PlacementSignal[] = [];
  const osName = asOs(asMap(spec['os'])?.['name']);
  if (osName !== undefined) signals.push({ os: osName, via: 'os.name', path: ['os', 'name'] });
  const selector = stringEntries(spec['nodeSelector']);
  for (const label of OS_LABELS) {
    const os = asOs(selector[label]);
    if (os !== undefined) signals.push({ os, via: 'nodeSelector', path: ['nodeSelector', label] });
  }
  const windowsBuild = selector[WINDOWS_BUILD_LABEL];
  if (windowsBuild !== undefined)
    signals.push({ os: 'windows', via: 'windows-build', path: ['nodeSelector', WINDOWS_BUILD_LABEL] });
  const affinityOs = requiredAffinityOs(spec);
  if (affinityOs !== undefined)
    signals.push({ os: affinityOs, via: 'nodeAffinity', path: ['affinity', 'nodeAffinity'] });
  const runtimeClassName = asString(spec['runtimeClassName']);
  const pool =
    runtimeClassName === undefined ? undefined : cluster?.windows.find((w) => w.runtimeClass === runtimeClassName);
  if (
    pool !== undefined ||
    (cluster === undefined && runtimeClassName !== undefined && /windows/i.test(runtimeClassName))
  ) {
    signals.push({ os: 'windows', via: 'runtimeClassName', path: ['runtimeClassName'] });
  }
  const oses = new Set(signals.map((s) => s.os));
  return {
    signals,
    os: oses.size === 1 ? signals[0]?.os : undefined,
    conflict: oses.size > 1,
    osName,
    runtimeClassName,
    runtimeClassBuild: pool?.build,
    windowsBuild,
    placed: signals.some((s) => s.via !== 'os.name') || runtimeClassName !== undefined,
  };
}

/** The OS every required node-affinity term pins, if they all pin the same one. */
function requiredAffinityOs(spec: JsonMap): PodOs | undefined {
  const required = asMap(
    asMap(asMap(spec['affinity'])?.['nodeAffinity'])?.['requiredDuringSchedulingIgnoredDuringExecution'],
  );
  const terms = asArray(required?.['nodeSelectorTerms']);
  if (terms.length === 0) return undefined;
  const perTerm = terms.map((term) => termOs(asMap(term)));
  const first = perTerm[0];
  return first !== undefined && perTerm.every((os) => os === first) ? first : undefined;
}

function termOs(term: JsonMap | undefined): PodOs | undefined {
  for (const expr of asArray(term?.['matchExpressions'])) {
    const e = asMap(expr);
    if (e === undefined || !OS_LABELS.includes(asString(e['key']) ?? '')) continue;
    const values = asArray(e['values']).map(asOs);
    const op = e['operator'];
    if (op === 'In' && values.length === 1) return values[0];
    if (op === 'NotIn' && values.length === 1)
      return values[0] === 'windows' ? 'linux' : values[0] === 'linux' ? 'windows' : undefined;
  }
  return undefined;
}

/** Whether the pod's tolerations let it onto nodes with the Windows taint. */
export function toleratesTaint(spec: JsonMap, taint: WindowsTaint = WINDOWS_TAINT): boolean {
  return asArray(spec['tolerations']).some((item) => {
    const t = asMap(item);
    if (t === undefined) return false;
    const key = asString(t['key']) ?? '';
    const operator = asString(t['operator']) ?? 'Equal';
    const effect = asString(t['effect']) ?? '';
    if (effect !== '' && effect !== taint.effect) return false;
    if (key === '') return operator === 'Exists';
    if (key !== taint.key) return false;
    return operator === 'Exists' || t['value'] === taint.value;
  });
}
