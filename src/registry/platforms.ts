// What an image runs on, from its manifest: an index lists a platform per
// entry (`os`, `os.version`); a single manifest says it in its config blob.
import { MEDIA, parseJson, type RegistryClient } from './client.js';
import { RegistryError } from './errors.js';
import type { RegistryRef } from './reference.js';

export interface Platform {
  readonly os: string;
  readonly osVersion?: string;
  readonly architecture?: string;
}

export interface ImagePlatforms {
  /** Digest of the manifest or index the reference pointed at. */
  readonly digest: string;
  readonly platforms: readonly Platform[];
}

interface IndexEntry {
  readonly mediaType?: string;
  readonly digest?: string;
  readonly platform?: { readonly os?: string; readonly 'os.version'?: string; readonly architecture?: string };
  readonly annotations?: Readonly<Record<string, string>>;
}

export async function fetchPlatforms(
  client: RegistryClient,
  ref: RegistryRef,
  signal?: AbortSignal,
): Promise<ImagePlatforms> {
  const manifest = await client.manifest(ref, ref.reference, signal);
  const doc = parseJson(manifest.body, `${ref.repository} manifest`) as {
    mediaType?: string;
    manifests?: IndexEntry[];
    config?: { digest?: string };
  };
  const mediaType =
    manifest.mediaType !== '' && manifest.mediaType !== 'application/json' ? manifest.mediaType : (doc.mediaType ?? '');
  if (mediaType === MEDIA.ociIndex || mediaType === MEDIA.dockerList || Array.isArray(doc.manifests)) {
    return { digest: manifest.digest, platforms: indexPlatforms(doc.manifests ?? []) };
  }
  const configDigest = doc.config?.digest;
  if (typeof configDigest !== 'string')
    throw new RegistryError(
      'registry.bad-manifest',
      `${ref.repository}: manifest without config (${mediaType || 'no media type'})`,
    );
  const config = parseJson(await client.blob(ref, configDigest, signal), `${ref.repository} config`) as {
    os?: unknown;
    'os.version'?: unknown;
    architecture?: unknown;
  };
  if (typeof config.os !== 'string')
    throw new RegistryError('registry.bad-manifest', `${ref.repository}: config ${configDigest} names no os`);
  return { digest: manifest.digest, platforms: [platformOf(config.os, config['os.version'], config.architecture)] };
}

/** Attestation and signature entries (platform unknown/unknown) are not images to run. */
function indexPlatforms(entries: readonly IndexEntry[]): Platform[] {
  return entries
    .filter(
      (e) =>
        e.platform?.os !== undefined &&
        e.platform.os !== 'unknown' &&
        e.annotations?.['vnd.docker.reference.type'] === undefined,
    )
    .map((e) => platformOf(e.platform?.os, e.platform?.['os.version'], e.platform?.architecture));
}

function platformOf(os: unknown, osVersion: unknown, architecture: unknown): Platform {
  return {
    os: String(os),
    ...(typeof osVersion === 'string' && osVersion !== '' ? { osVersion } : {}),
    ...(typeof architecture === 'string' ? { architecture } : {}),
  };
}

/**
 * The one OS the image runs on among the cluster's architecture (amd64), or
 * null when it runs on both; the Windows build only when every Windows entry
 * has the same one (a multi-build image fits any node).
 */
export function summarise(platforms: readonly Platform[]): { os: 'linux' | 'windows'; osVersion?: string } | null {
  const amd64 = platforms.filter((p) => p.architecture === undefined || p.architecture === 'amd64');
  const usable = (amd64.length > 0 ? amd64 : platforms).filter((p) => p.os === 'linux' || p.os === 'windows');
  const oses = new Set(usable.map((p) => p.os));
  if (oses.size !== 1) return null;
  const os = usable[0]?.os === 'windows' ? 'windows' : 'linux';
  if (os === 'linux') return { os };
  const builds = new Set(usable.map((p) => buildOf(p.osVersion)));
  const only = builds.size === 1 ? [...builds][0] : undefined;
  return only === undefined ? { os } : { os, osVersion: only };
}

/** `10.0.20348.2762` → `10.0.20348`: the build is what process isolation matches. */
export function buildOf(osVersion: string | undefined): string | undefined {
  return osVersion === undefined ? undefined : /^(\d+\.\d+\.\d+)/.exec(osVersion)?.[1];
}
