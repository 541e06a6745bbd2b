// Every pod template in an object, whatever workload kind wraps it.
import type { ManifestObject } from './objects.js';
import { asMap, stringEntries, type JsonMap, type NodePath } from './values.js';

export interface PodTemplate {
  readonly object: ManifestObject;
  /** Path of the pod spec from the document root. */
  readonly specPath: NodePath;
  readonly spec: JsonMap;
  readonly labels: Readonly<Record<string, string>>;
  /** Pods this template runs; undefined when it depends on the cluster (DaemonSet). */
  readonly replicas: number | undefined;
}

/** Path from the object to its pod spec, per workload kind. */
const SPEC_PATHS: Readonly<Record<string, NodePath>> = {
  Pod: ['spec'],
  PodTemplate: ['template', 'spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  ReplicationController: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};

export function isWorkloadKind(kind: string): boolean {
  return SPEC_PATHS[kind] !== undefined;
}

export function templateOf(object: ManifestObject): PodTemplate | undefined {
  const rel = SPEC_PATHS[object.kind];
  if (rel === undefined) return undefined;
  const spec = asMap(getIn(object.value, rel));
  if (spec === undefined) return undefined;
  const metadataPath = object.kind === 'Pod' ? ['metadata'] : [...rel.slice(0, -1), 'metadata'];
  return {
    object,
    specPath: [...object.path, ...rel],
    spec,
    labels: stringEntries(asMap(getIn(object.value, metadataPath))?.['labels']),
    replicas: replicasOf(object),
  };
}

function replicasOf(object: ManifestObject): number | undefined {
  const spec = asMap(object.value['spec']);
  const count = (value: unknown): number => (typeof value === 'number' && value >= 0 ? value : 1);
  switch (object.kind) {
    case 'Pod':
      return 1;
    case 'PodTemplate':
      return 0;
    case 'DaemonSet':
      return undefined;
    case 'Job':
      return count(spec?.['parallelism']);
    case 'CronJob':
      return count(asMap(asMap(spec?.['jobTemplate'])?.['spec'])?.['parallelism']);
    default:
      return count(spec?.['replicas']);
  }
}

export function getIn(value: unknown, path: NodePath): unknown {
  let node = value;
  for (const segment of path) {
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else node = asMap(node)?.[String(segment)];
    if (node === undefined) return undefined;
  }
  return node;
}
