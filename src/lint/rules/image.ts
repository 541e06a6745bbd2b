// Rules about the images in a pod: Windows process isolation needs the image's
// build to equal the node's (Microsoft docs, "Windows container version
// compatibility"), and one pod cannot mix OSes.
import { WINDOWS } from '../../matrix/index.js';
import { isHostProcess } from '../pod.js';
import type { RuleHit, TemplateRule } from './types.js';

function buildName(build: string): string {
  const release = WINDOWS.find((w) => w.build === build);
  return release === undefined ? build : `${build} (${release.ltsc})`;
}

export const windowsBuildMismatch: TemplateRule = {
  scope: 'template',
  id: 'image/windows-build-mismatch',
  severity: 'error',
  why: "Windows nodes run containers with process isolation, which needs the image's OS build to equal the node's; otherwise the container fails to start.",
  hint: 'use the image tag for the node build (ltsc2022 for 10.0.20348, ltsc2025 for 10.0.26100) or place the pod on a matching pool',
  needsCluster: true,
  fixable: false,
  check(ctx) {
    const { cluster, placement } = ctx;
    if (cluster === undefined || ctx.os === 'linux' || cluster.windows.length === 0) return [];
    const pinned = placement.runtimeClassBuild ?? placement.windowsBuild;
    const builds = pinned === undefined ? cluster.windows.map((w) => w.build) : [pinned];
    const hits: RuleHit[] = [];
    for (const container of ctx.containers) {
      const image = ctx.imageOs(container);
      // HostProcess containers run on the host, not in a Windows container: any build works.
      if (image?.os !== 'windows' || image.osVersion === undefined || isHostProcess(ctx.spec, container)) continue;
      if (builds.includes(image.osVersion)) continue;
      const where =
        pinned === undefined
          ? 'no Windows node in the cluster runs it'
          : `the pod is pinned to build ${buildName(pinned)}`;
      hits.push({
        path: [...container.path, 'image'],
        container: container.name,
        message: `image ${container.image ?? ''} is built for Windows ${buildName(image.osVersion)} but ${where} (cluster builds: ${cluster.windows.map((w) => buildName(w.build)).join(', ')})`,
        osSource: image.source,
      });
    }
    return hits;
  },
};

export const mixedOsContainers: TemplateRule = {
  scope: 'template',
  id: 'pod/mixed-os-containers',
  severity: 'error',
  why: 'All containers of a pod share one node and one sandbox: Windows and Linux containers cannot run in the same pod.',
  hint: 'split the pod: one workload per OS, talking over a Service',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const known = ctx.containers.map((c) => ({ c, image: ctx.imageOs(c) })).filter((x) => x.image !== undefined);
    const first = known[0];
    const other = known.find((x) => x.image?.os !== first?.image?.os);
    if (first === undefined || other === undefined || other.image === undefined || first.image === undefined) return [];
    return [
      {
        path: [...other.c.path, 'image'],
        container: other.c.name,
        message: `container ${other.c.name} runs a ${other.image.os} image but container ${first.c.name} runs a ${first.image.os} image`,
        osSource: other.image.source,
      },
    ];
  },
};

export const IMAGE_RULES: readonly TemplateRule[] = [windowsBuildMismatch, mixedOsContainers];
