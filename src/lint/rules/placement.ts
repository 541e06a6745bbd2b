// Rules about where a pod may be scheduled: a Linux pod scheduled onto a
// Windows node cannot pull its image and hangs in ContainerCreating until it
// times out (Kubernetes docs, "Guide for scheduling Windows containers").
import { describeFix, needsToleration, placementFix } from '../suggest.js';
import { WINDOWS_TAINT } from '../cluster.js';
import { osSourceOf, type RuleHit, type TemplateContext, type TemplateRule } from './types.js';

function fixHint(ctx: TemplateContext, fallback: string): string {
  const fix = placementFix(ctx);
  return fix === undefined ? fallback : describeFix(fix);
}

export const missingOs: TemplateRule = {
  scope: 'template',
  id: 'placement/missing-os',
  severity: 'error',
  why:
    'In a mixed cluster a pod that no nodeSelector, node affinity or RuntimeClass places can land on a node of the other OS ' +
    'and hang in ContainerCreating; spec.os.name alone does not steer the scheduler or the DaemonSet controller.',
  hint: 'set a kubernetes.io/os nodeSelector (or a RuntimeClass) and spec.os.name; split pods whose images are for both OSes',
  needsCluster: false,
  fixable: true,
  check(ctx) {
    if (!ctx.mixed || ctx.placement.placed) return [];
    const osName = ctx.placement.osName;
    if (osName !== undefined) {
      return [
        {
          path: ['os', 'name'],
          message:
            `spec.os.name: ${osName} places nothing: the scheduler and the DaemonSet controller do not read it ` +
            '(needs a kubernetes.io/os nodeSelector or node affinity, or a RuntimeClass)',
          hint: fixHint(ctx, this.hint),
        },
      ];
    }
    const images = ctx.os === undefined ? '' : `; its images are ${ctx.os}`;
    return [
      {
        path: [],
        message: `no OS placement (kubernetes.io/os nodeSelector or node affinity, RuntimeClass)${images}`,
        hint: fixHint(ctx, this.hint),
        ...osSourceOf(ctx),
      },
    ];
  },
};

export const osNameMissing: TemplateRule = {
  scope: 'template',
  id: 'placement/os-name-missing',
  severity: 'warning',
  why: 'Without spec.os.name the API server does not reject fields the OS cannot honour, and the kubelet cannot refuse a pod meant for the other OS.',
  hint: 'set spec.os.name to the OS the pod is placed on',
  needsCluster: false,
  fixable: true,
  check(ctx) {
    const { placement } = ctx;
    const os = placement.os;
    if (os === undefined || placement.osName !== undefined || !(ctx.mixed || os === 'windows')) return [];
    const via = placement.signals[0]?.via ?? 'runtimeClassName';
    return [
      {
        path: [],
        message: `placed on ${os} by ${via} but spec.os.name is not set`,
        hint: `add spec.os.name: ${os} (\`kubemix lint --fix\` writes it)`,
      },
    ];
  },
};

export const conflictingOs: TemplateRule = {
  scope: 'template',
  id: 'placement/conflicting-os',
  severity: 'error',
  why: 'Placement that names both OSes can never be satisfied: the pod stays Pending or is rejected by the kubelet.',
  hint: 'make spec.os.name, the nodeSelector, node affinity and RuntimeClass name the same OS',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const { signals, conflict } = ctx.placement;
    const first = signals[0];
    const other = signals.find((s) => s.os !== first?.os);
    if (!conflict || first === undefined || other === undefined) return [];
    return [{ path: other.path, message: `${first.via} says ${first.os} but ${other.via} says ${other.os}` }];
  },
};

export const missingToleration: TemplateRule = {
  scope: 'template',
  id: 'placement/missing-toleration',
  severity: 'error',
  why: `kubemix taints every Windows node ${WINDOWS_TAINT.key}=${WINDOWS_TAINT.value}:${WINDOWS_TAINT.effect}; a Windows pod that does not tolerate it stays Pending.`,
  hint: `add a toleration {key: ${WINDOWS_TAINT.key}, operator: Equal, value: ${WINDOWS_TAINT.value}, effect: ${WINDOWS_TAINT.effect}} or use a kubemix Windows RuntimeClass`,
  needsCluster: false,
  fixable: true,
  check(ctx) {
    if (!needsToleration(ctx)) return [];
    const taint = ctx.cluster?.taint ?? WINDOWS_TAINT;
    return [
      {
        path: ['tolerations'],
        message: `placed on Windows but does not tolerate the ${taint.key}=${taint.value}:${taint.effect} taint`,
        hint: fixHint(ctx, this.hint),
      },
    ];
  },
};

export const unknownRuntimeClass: TemplateRule = {
  scope: 'template',
  id: 'placement/unknown-runtimeclass',
  severity: 'error',
  why: 'A pod naming a RuntimeClass that does not exist is rejected at admission.',
  hint: "use one of the cluster's Windows RuntimeClasses (one per Windows build, named after the OS: windows-2022, windows-2025)",
  needsCluster: true,
  fixable: false,
  check(ctx) {
    const { cluster, placement } = ctx;
    const name = placement.runtimeClassName;
    if (cluster === undefined || name === undefined || placement.runtimeClassBuild !== undefined) return [];
    const windowsLike = /windows/i.test(name) || placement.os === 'windows' || ctx.os === 'windows';
    if (!windowsLike) return [];
    const known = cluster.windows.map((w) => w.runtimeClass).join(', ') || 'none';
    return [
      {
        path: ['runtimeClassName'],
        message: `RuntimeClass "${name}" is not one the cluster defines (Windows RuntimeClasses: ${known})`,
      },
    ];
  },
};

export const unknownWindowsBuild: TemplateRule = {
  scope: 'template',
  id: 'placement/unknown-windows-build',
  severity: 'error',
  why: 'A node.kubernetes.io/windows-build selector that no node carries leaves the pod Pending.',
  hint: 'select a build the cluster runs, or use its RuntimeClass',
  needsCluster: true,
  fixable: false,
  check(ctx) {
    const { cluster, placement } = ctx;
    const build = placement.windowsBuild;
    if (cluster === undefined || build === undefined || cluster.windows.some((w) => w.build === build)) return [];
    const builds = cluster.windows.map((w) => `${w.build} (${w.os})`).join(', ') || 'none';
    return [
      {
        path: ['nodeSelector', 'node.kubernetes.io/windows-build'],
        message: `no Windows node runs build ${build}; the cluster has ${builds}`,
      },
    ];
  },
};

export const noMatchingNodes: TemplateRule = {
  scope: 'template',
  id: 'placement/no-matching-nodes',
  severity: 'error',
  why:
    'A pod placed on an OS the cluster has no worker for stays Pending; an unplaced one whose images are for that OS ' +
    'lands on a node of the other and cannot start.',
  hint: 'add workers of that OS to the cluster, or place the pod on the other OS',
  needsCluster: true,
  fixable: false,
  check(ctx) {
    const { cluster, placement } = ctx;
    // Unplaced, the pod goes wherever its images say it must (a Windows image on a Linux-only cluster: nowhere).
    const os = placement.os ?? ctx.os;
    if (cluster === undefined || os === undefined) return [];
    const has = os === 'windows' ? cluster.windows.length > 0 : cluster.hasLinux;
    if (has) return [];
    if (placement.os !== undefined) {
      const signal = placement.signals[0];
      return [{ path: signal?.path ?? [], message: `placed on ${os} but the cluster has no ${os} workers` }];
    }
    return [
      {
        path: [],
        message: `its images are ${os} but the cluster has no ${os} workers: it cannot run on any node`,
        ...osSourceOf(ctx),
      },
    ];
  },
};

export const imageOsMismatch: TemplateRule = {
  scope: 'template',
  id: 'placement/image-os-mismatch',
  severity: 'error',
  why: 'A container image for one OS cannot start on a node of the other: the pod fails with an image or sandbox error.',
  hint: 'place the pod on the OS its images are built for, or use images for the placed OS',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const os = ctx.placement.os;
    if (os === undefined) return [];
    const hits: RuleHit[] = [];
    for (const container of ctx.containers) {
      const image = ctx.imageOs(container);
      if (image === undefined || image.os === os) continue;
      hits.push({
        path: [...container.path, 'image'],
        container: container.name,
        message: `image ${container.image ?? ''} is a ${image.os} image but the pod is placed on ${os}`,
        osSource: image.source,
      });
    }
    return hits;
  },
};

export const PLACEMENT_RULES: readonly TemplateRule[] = [
  missingOs,
  osNameMissing,
  conflictingOs,
  missingToleration,
  unknownRuntimeClass,
  unknownWindowsBuild,
  noMatchingNodes,
  imageOsMismatch,
];
