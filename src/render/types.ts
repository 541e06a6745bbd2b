// What `render/` produces: a file for a host, with its content.

/** An artifact together with its content, as `render/` produces it. */
export interface RenderedArtifact {
  readonly node: string;
  readonly remotePath: string;
  readonly mode: string;
  readonly owner: string;
  readonly content: string;
}

/** The node of artifacts applied through the API (manifests): no host has this name. */
export const CLUSTER_NODE = 'cluster';

/**
 * The node of artifacts every Windows worker uploads, one file in the plan
 * for all of them (the PowerShell helpers): not a DNS label, so no host has
 * this name; each Windows node's task uploads it to the artifact's path.
 */
export const WINDOWS_NODES = '_windows';
