// Where an artifact lies in a plan directory: `artifacts/<node>/<path on host>`,
// with a Windows path `C:\k\x` becoming `artifacts/<node>/C/k/x`.

import { CLUSTER_NODE } from '../render/types.js';

export { CLUSTER_NODE };

export function artifactLocalPath(node: string, remotePath: string): string {
  const windows = /^([A-Za-z]):[\\/](.*)$/.exec(remotePath);
  const parts =
    windows === null ? remotePath.split('/') : [windows[1]?.toUpperCase() ?? '', ...(windows[2] ?? '').split(/[\\/]/)];
  const clean = parts.filter((p) => p !== '' && p !== '.');
  if (clean.some((p) => p === '..')) throw new Error(`artifact path escapes its folder: ${remotePath}`);
  return ['artifacts', node, ...clean].join('/');
}

/** Where cluster-node artifacts (`manifests/…`) are put on the host that applies them. */
export const CLUSTER_ARTIFACT_DIR = '/etc/kubemix';

/**
 * The path an upload writes on the task's host. Cluster-node artifacts have a
 * path relative to the plan (`manifests/x.yaml`), not to any host: written as
 * is, they would land in the login's working directory, not where the task
 * that applies them reads them.
 */
export function uploadPath(artifact: { readonly node: string; readonly remotePath: string }): string {
  return artifact.node === CLUSTER_NODE ? `${CLUSTER_ARTIFACT_DIR}/${artifact.remotePath}` : artifact.remotePath;
}

export function artifactId(node: string, remotePath: string): string {
  return `${node}:${remotePath}`;
}
