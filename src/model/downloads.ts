// The node downloads a cluster needs, resolved against the user's pins:
// which URL the deployer fetches and which SHA256 the file must have (the
// spec's pin, else the matrix's, else the checksum file upstream publishes
// beside it, which the deployer reads before it uses the file). Scripts name
// a download's hash as `{{sha256:ID}}`; the executor fills it in from its
// content-addressed cache, so a node installs only what the deployer verified.
import { InputError } from '../errors.js';
import {
  linuxDownloads,
  linuxKubernetesDownloads,
  SERVICES,
  windowsDownloads,
  type NodeDownload,
} from '../matrix/index.js';
import type { ClusterModel } from './resolve.js';

export interface ResolvedDownload {
  readonly id: string;
  /** Cache and log name (`containerd.tar.gz`). */
  readonly name: string;
  readonly version: string;
  /** Where the deployer fetches it: the spec's URL, or the origin behind the artifact mirror. */
  readonly url: string;
  /** The SHA256 when the spec or the matrix pins it (lower-case hex). */
  readonly sha256?: string;
  /** Otherwise the checksum file upstream publishes, read by the deployer first. */
  readonly checksumUrl?: string;
  readonly hashFrom: 'spec' | 'matrix' | 'published';
}

/** `{{sha256:ID}}` anywhere in a text (global: for matchAll and replace, which keep no state). */
export const SHA256_REF = /\{\{sha256:([A-Za-z0-9_./-]+)\}\}/g;

/** The placeholder the executor replaces with the download's verified SHA256. */
export function sha256Ref(id: string): string {
  return `{{sha256:${id}}}`;
}

/** Download ids a text refers to, in order of first use. */
export function sha256Refs(text: string): string[] {
  return [...new Set([...text.matchAll(SHA256_REF)].map((m) => m[1] ?? ''))];
}

/** `https://host/path` → `<mirror>/host/path` when the spec names an artifact mirror. */
export function mirroredUrl(url: string, mirror: string | undefined): string {
  if (mirror === undefined) return url;
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${u.host}${u.pathname}`;
}

function matrixDownloads(model: ClusterModel): NodeDownload[] {
  const v = model.versions;
  return [
    ...linuxDownloads(v.containerd, v.runc, v.cniPlugins),
    ...linuxKubernetesDownloads(v.kubernetes, v.crictl),
    ...windowsDownloads(v.kubernetes, v.containerd),
  ];
}

/** One download, resolved; a download without any known hash fails planning (exit 2), naming the pin to add. */
export function resolveDownload(
  model: ClusterModel,
  id: string,
  matrix: readonly NodeDownload[] = matrixDownloads(model),
): ResolvedDownload {
  const d = matrix.find((x) => x.id === id);
  if (d === undefined) throw new Error(`no download ${id} in the matrix`);
  const user = model.spec.downloads[id];
  const mirror = model.spec.mirrors.artifacts;
  const url = user?.url ?? mirroredUrl(d.url, mirror);
  const base = { id, name: d.name, version: d.version, url };
  if (user?.sha256 !== undefined) return { ...base, sha256: user.sha256, hashFrom: 'spec' };
  if (d.checksum.kind === 'sidecar')
    return { ...base, checksumUrl: mirroredUrl(d.checksum.url, mirror), hashFrom: 'published' };
  if (d.checksum.sha256 !== null) return { ...base, sha256: d.checksum.sha256, hashFrom: 'matrix' };
  throw new InputError(
    'downloads.no-sha256',
    `kubemix knows no published SHA256 for ${d.name} ${d.version} (${d.url}) and will not install a file it cannot verify`,
    {
      path: `spec.downloads.${id}.sha256`,
      hint: `pin it: spec.downloads.${id}.sha256 (and .url for another source)`,
    },
  );
}

/** The services node's download cache, or undefined when the cluster has none (nodes then fetch from the source). */
export function downloadCache(model: ClusterModel): { readonly node: string; readonly base: string } | undefined {
  const svc = model.nodes.find((n) => n.role === 'services');
  if (svc === undefined || !model.spec.services.enabled) return undefined;
  return { node: svc.name, base: `https://${svc.ip}:${SERVICES.filesPort}/sha256/` };
}

/** Where a node fetches a download: the services node's cache by hash, or the source itself. */
export function nodeFetchUrl(model: ClusterModel, id: string): string {
  const cache = downloadCache(model);
  return cache === undefined ? resolveDownload(model, id).url : `${cache.base}${sha256Ref(id)}`;
}
