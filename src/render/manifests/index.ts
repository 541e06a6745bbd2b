// Cluster manifests (node `cluster`, `manifests/<name>.yaml`): applied once
// through the API from the first controller. Multi-document YAML, objects in
// apply order.
import { stringify } from 'yaml';
import type { ClusterModel } from '../../model/resolve.js';
import { CLUSTER_NODE, type RenderedArtifact } from '../types.js';
import { calicoObjects } from './calico.js';
import { flannelObjects } from './flannel.js';
import { runtimeClasses, windowsFlannelRbac } from './windows.js';
import { hostProcessObjects } from './windows-hostprocess.js';

export { CLUSTER_NODE };

export function manifestPath(name: string): string {
  return `manifests/${name}.yaml`;
}

export function toYaml(objects: readonly Record<string, unknown>[]): string {
  return `# Rendered by kubemix; re-plan instead of editing.\n${objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n')}`;
}

/** name → objects; only what the cluster's CNI and node mix call for. */
export function clusterManifests(model: ClusterModel): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>();
  if (model.overlay.plugin === 'flannel') out.set('flannel', flannelObjects(model));
  if (model.overlay.plugin === 'calico') out.set('calico', calicoObjects(model));
  const windows = model.nodes.some((n) => n.osFamily === 'windows');
  if (windows) out.set('windows-runtimeclasses', runtimeClasses(model));
  if (windows && model.overlay.plugin === 'flannel') out.set('flannel-windows-rbac', windowsFlannelRbac());
  if (windows && model.windowsHostProcess !== undefined) out.set('windows-hostprocess', hostProcessObjects(model));
  return out;
}

export function renderManifests(model: ClusterModel): RenderedArtifact[] {
  return [...clusterManifests(model)].map(([name, objects]) => ({
    node: CLUSTER_NODE,
    remotePath: manifestPath(name),
    mode: '0644',
    owner: 'root:root',
    content: toYaml(objects),
  }));
}
