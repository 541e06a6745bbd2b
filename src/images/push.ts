// Pushes bundles into a registry as an OCI distribution client: each image
// goes to `<registry>/<upstream registry>/<path>` (the layout the air-gapped
// nodes' hosts.toml reads, so image names stay upstream's), blobs by digest,
// each HEADed first and skipped when the registry holds it (a push that was
// cut, even by kill -9, goes on where it stopped; an upload session that was
// cut is started again), mounted from another repository of this push when it
// is already there, otherwise uploaded and checked against its digest as it
// is read. Manifests go up byte for byte (an index keeps its digest and every
// platform it lists, Windows ones too), children before the index, then the tag.
import type { Readable } from 'node:stream';
import { HostError } from '../errors.js';
import type { DistributionClient } from '../registry/distribution.js';
import { isIndex, type Bundle, type BundleImage, type Descriptor } from './bundle.js';

export interface PushReport {
  readonly images: number;
  readonly blobsUploaded: number;
  readonly blobsMounted: number;
  readonly blobsPresent: number;
  readonly bytesUploaded: number;
  readonly manifestsPut: number;
  readonly manifestsPresent: number;
}

export type PushEvent =
  | {
      readonly kind: 'blob';
      readonly repo: string;
      readonly digest: string;
      readonly action: 'uploaded' | 'mounted' | 'present';
      readonly bytes: number;
    }
  | { readonly kind: 'image'; readonly name: string; readonly digest: string; readonly action: 'pushed' | 'present' };

/** `registry.k8s.io/pause:3.10.2` → repository `registry.k8s.io/pause` and reference `3.10.2` (or the digest). */
export function targetOf(name: string): { readonly repo: string; readonly reference: string } {
  const at = name.indexOf('@');
  if (at >= 0) return { repo: name.slice(0, at), reference: name.slice(at + 1) };
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/')
    ? { repo: name.slice(0, colon), reference: name.slice(colon + 1) }
    : { repo: name, reference: 'latest' };
}

interface Planned {
  readonly image: BundleImage;
  readonly bundle: Bundle;
  readonly repo: string;
  readonly reference: string;
  /** Manifests in push order (children first), with their bytes. */
  readonly manifests: { readonly d: Descriptor; readonly body: Buffer }[];
  readonly blobs: Descriptor[];
}

async function planImage(bundle: Bundle, image: BundleImage, registry: DistributionClient): Promise<Planned> {
  const { repo, reference } = targetOf(image.name);
  const manifests: Planned['manifests'] = [];
  const blobs: Descriptor[] = [];
  const walk = async (d: Descriptor): Promise<void> => {
    if (!(await bundle.has(d.digest))) {
      // An index may list platforms the bundle left out: fine only when the registry has them.
      if ((await registry.manifestDigest(repo, d.digest)) !== undefined) return;
      const p = d.platform;
      const platform = p === undefined ? '' : ` (${[p.os, p.architecture, p['os.version']].filter(Boolean).join('/')})`;
      throw new HostError(
        'images.incomplete',
        `${image.name}: manifest ${d.digest}${platform} is neither in ${bundle.path} nor in the registry; the registry refuses an index with a platform missing`,
        {
          path: bundle.path,
          hint: 'write the bundle with every platform of the image (kubemix images pull does; ctr export --all-platforms)',
        },
      );
    }
    const body = await bundle.read(d.digest);
    const doc = JSON.parse(body.toString('utf8')) as {
      manifests?: Descriptor[];
      config?: Descriptor;
      layers?: Descriptor[];
    };
    if (isIndex(d.mediaType)) for (const child of doc.manifests ?? []) await walk(child);
    else blobs.push(...(doc.config === undefined ? [] : [doc.config]), ...(doc.layers ?? []));
    manifests.push({ d, body });
  };
  await walk(image.top);
  return { image, bundle, repo, reference, manifests, blobs };
}

export async function pushBundles(
  bundles: readonly Bundle[],
  registry: DistributionClient,
  options: { readonly only?: (name: string) => boolean; readonly report?: (e: PushEvent) => void } = {},
): Promise<PushReport> {
  const report = options.report ?? (() => undefined);
  const planned: Planned[] = [];
  for (const bundle of bundles)
    for (const image of bundle.images)
      if (options.only?.(image.name) ?? true) planned.push(await planImage(bundle, image, registry));
  const counts = {
    blobsUploaded: 0,
    blobsMounted: 0,
    blobsPresent: 0,
    bytesUploaded: 0,
    manifestsPut: 0,
    manifestsPresent: 0,
  };
  const seen = new Set<string>();
  /** Where each blob is known to be in the registry (a repository), for mounts. */
  const holds = new Map<string, string>();
  /** Per bundle: blob → the repositories still missing it. */
  const missing = new Map<Bundle, Map<string, { size: number; repos: string[] }>>();
  for (const p of planned)
    for (const b of p.blobs) {
      const key = `${p.repo} ${b.digest}`;
      if (holds.get(b.digest) === p.repo || seen.has(key)) continue;
      seen.add(key);
      if (await registry.blobExists(p.repo, b.digest)) {
        counts.blobsPresent += 1;
        holds.set(b.digest, p.repo);
        report({ kind: 'blob', repo: p.repo, digest: b.digest, action: 'present', bytes: b.size });
        continue;
      }
      const m = missing.get(p.bundle) ?? new Map<string, { size: number; repos: string[] }>();
      missing.set(p.bundle, m);
      const entry = m.get(b.digest) ?? { size: b.size, repos: [] };
      entry.repos.push(p.repo);
      m.set(b.digest, entry);
    }
  for (const [bundle, wanted] of missing) {
    for (const [digest, w] of wanted) {
      // Already in the registry under another repository (this push, or one before): mount it.
      const from = holds.get(digest);
      if (from !== undefined) {
        for (const repo of [...w.repos])
          if (await mount(repo, digest, from, w.size)) w.repos.splice(w.repos.indexOf(repo), 1);
      }
    }
    const toUpload = new Set([...wanted].filter(([, w]) => w.repos.length > 0).map(([d]) => d));
    const unavailable = [];
    for (const d of toUpload) if (!(await bundle.has(d))) unavailable.push(d);
    if (unavailable.length > 0)
      throw new HostError(
        'images.incomplete',
        `${bundle.path} lacks blob(s) ${unavailable.join(', ')} its manifests reference`,
        {
          path: bundle.path,
        },
      );
    await bundle.eachBlob(toUpload, async (digest: string, data: Readable) => {
      const w = wanted.get(digest);
      const [first, ...rest] = w?.repos ?? [];
      if (w === undefined || first === undefined) return;
      await registry.uploadBlob(
        first,
        digest,
        w.size,
        data,
        `${bundle.where(digest)} (blob of an image bound for ${first})`,
      );
      counts.blobsUploaded += 1;
      counts.bytesUploaded += w.size;
      holds.set(digest, first);
      report({ kind: 'blob', repo: first, digest, action: 'uploaded', bytes: w.size });
      for (const repo of rest)
        if (!(await mount(repo, digest, first, w.size)))
          throw new HostError('images.mount', `${registry.host}: cannot mount ${digest} into ${repo}`);
    });
  }
  for (const p of planned) {
    for (const { d, body } of p.manifests) {
      if ((await registry.manifestDigest(p.repo, d.digest)) !== undefined) counts.manifestsPresent += 1;
      else {
        await registry.putManifest(p.repo, d.digest, body, d.mediaType);
        counts.manifestsPut += 1;
      }
    }
    const top = p.manifests.at(-1);
    if (top === undefined) continue;
    const tagged = p.reference.startsWith('sha256:') ? p.reference : await registry.manifestDigest(p.repo, p.reference);
    if (tagged === top.d.digest) report({ kind: 'image', name: p.image.name, digest: top.d.digest, action: 'present' });
    else {
      await registry.putManifest(p.repo, p.reference, top.body, top.d.mediaType);
      counts.manifestsPut += 1;
      report({ kind: 'image', name: p.image.name, digest: top.d.digest, action: 'pushed' });
    }
  }
  return { images: planned.length, ...counts };

  async function mount(repo: string, digest: string, from: string, bytes: number): Promise<boolean> {
    const ok = await registry.mountBlob(repo, digest, from);
    if (ok) {
      counts.blobsMounted += 1;
      report({ kind: 'blob', repo, digest, action: 'mounted', bytes });
    }
    return ok;
  }
}
