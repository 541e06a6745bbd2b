// What `lint --cluster SPEC` and `guard serve --cluster SPEC` check workloads
// against: the cluster's Windows builds, whether it has Linux nodes, and the
// image mirrors its nodes pull through.
import { lintClusterFor, type LintCluster } from '../lint/cluster.js';
import { resolveModel } from '../model/resolve.js';
import type { CliIo } from './io.js';
import { loadSpec } from './spec-arg.js';

export interface LintTarget {
  readonly cluster: LintCluster;
  /** Registry → mirror, as the spec names them. */
  readonly mirrors: Readonly<Record<string, string>>;
}

export function lintTargetFromSpec(spec: string, io: CliIo): LintTarget {
  const loaded = loadSpec(spec, {}, io);
  const model = resolveModel(loaded);
  const kube = model.nodes.filter((n) => n.role !== 'services' && n.schedulable);
  const windows = [...new Set(kube.filter((n) => n.osFamily === 'windows').map((n) => n.os))].sort();
  const mirrors = Object.fromEntries(model.mirrors.images.map((m) => [m.registry, m.mirror]));
  return { cluster: lintClusterFor(windows, { hasLinux: kube.some((n) => n.osFamily === 'linux') }), mirrors };
}
