// The placement a pod template should get. Shared by the rules (their hints)
// and by `--fix` (what it writes), so a hint never promises something the
// fixer does not do.
import type { PodOs } from './image-os.js';
import { WINDOWS_TAINT } from './cluster.js';
import { toleratesTaint } from './placement.js';
import type { TemplateContext } from './rules/types.js';

export interface PlacementFix {
  readonly os: PodOs;
  readonly osName: boolean;
  readonly nodeSelector: boolean;
  readonly toleration: boolean;
  readonly runtimeClass: string | undefined;
}

/** A Windows pod placed on Windows nodes that its tolerations (or RuntimeClass) do not let it onto. */
export function needsToleration(ctx: TemplateContext): boolean {
  const { placement, cluster } = ctx;
  if (placement.os !== 'windows') return false;
  if (cluster !== undefined && cluster.windows.length === 0) return false;
  if (toleratesTaint(ctx.spec, cluster?.taint ?? WINDOWS_TAINT)) return false;
  // A kubemix RuntimeClass carries the toleration; one lint cannot see (no
  // cluster, or not the cluster's) is left to placement/unknown-runtimeclass.
  return placement.runtimeClassName === undefined;
}

/** The cluster's RuntimeClass for this pod: the pool matching its images' build, or the only pool. */
function chooseRuntimeClass(ctx: TemplateContext): string | undefined {
  const pools = ctx.cluster?.windows ?? [];
  const builds = new Set(ctx.containers.map((c) => ctx.imageOs(c)?.osVersion).filter((b) => b !== undefined));
  const matching = pools.filter((p) => builds.has(p.build));
  if (matching.length === 1) return matching[0]?.runtimeClass;
  return builds.size === 0 && pools.length === 1 ? pools[0]?.runtimeClass : undefined;
}

/** The OS of each container image lint knows, in container order. */
function imageOses(ctx: TemplateContext): PodOs[] {
  return ctx.containers.map((c) => ctx.imageOs(c)?.os).filter((os): os is PodOs => os !== undefined);
}

export function placementFix(ctx: TemplateContext): PlacementFix | undefined {
  const { placement } = ctx;
  if (placement.conflict) return undefined;
  // Images of both OSes: no placement is right until the pod is split.
  if (new Set(imageOses(ctx)).size > 1) return undefined;
  if (!placement.placed) {
    if (!ctx.mixed) return undefined;
    // spec.os.name names the OS but places nothing; images that say otherwise need a human.
    if (placement.osName !== undefined && imageOses(ctx).some((os) => os !== placement.osName)) return undefined;
    // Unknown images are assumed Linux: Windows images are recognisable by name.
    const os = ctx.os ?? 'linux';
    const osName = placement.osName === undefined;
    if (os === 'linux') return { os, osName, nodeSelector: true, toleration: false, runtimeClass: undefined };
    const runtimeClass = chooseRuntimeClass(ctx);
    if (runtimeClass !== undefined) return { os, osName, nodeSelector: false, toleration: false, runtimeClass };
    return {
      os,
      osName,
      nodeSelector: true,
      toleration: !toleratesTaint(ctx.spec, ctx.cluster?.taint ?? WINDOWS_TAINT),
      runtimeClass: undefined,
    };
  }
  const os = placement.os;
  if (os === undefined) return undefined;
  const osName = placement.osName === undefined && (ctx.mixed || os === 'windows');
  const toleration = needsToleration(ctx);
  return osName || toleration ? { os, osName, nodeSelector: false, toleration, runtimeClass: undefined } : undefined;
}

/** The fix in words, for hints. */
export function describeFix(fix: PlacementFix): string {
  const parts: string[] = [];
  if (fix.osName) parts.push(`spec.os.name: ${fix.os}`);
  if (fix.runtimeClass !== undefined) parts.push(`runtimeClassName: ${fix.runtimeClass}`);
  if (fix.nodeSelector) parts.push(`nodeSelector kubernetes.io/os: ${fix.os}`);
  if (fix.toleration)
    parts.push(`a toleration for ${WINDOWS_TAINT.key}=${WINDOWS_TAINT.value}:${WINDOWS_TAINT.effect}`);
  return `add ${joinWords(parts)} (\`kubemix lint --fix\` writes it)`;
}

function joinWords(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1] ?? ''}`;
}
