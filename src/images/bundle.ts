// An image bundle as `kubemix up --images` and `kubemix images push` read it:
// named images (top descriptors) and the blobs they reference, from an OCI
// image layout directory (`kubemix images pull`, `crane pull --format=oci`,
// `skopeo copy oci:`), or an archive (a tar of an OCI layout: `skopeo copy
// oci-archive:`, `ctr export`; `docker save`, `skopeo copy docker-archive:`,
// `crane pull`: archive.ts). Every blob is checked against its digest as it
// is read; a file that does not match is refused, named.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { InputError } from '../errors.js';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: { readonly os?: string; readonly architecture?: string; readonly 'os.version'?: string };
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface BundleImage {
  /** Full reference: `registry.k8s.io/pause:3.10.2` (docker.io names completed). */
  readonly name: string;
  readonly top: Descriptor;
}

export interface Bundle {
  readonly path: string;
  readonly images: readonly BundleImage[];
  has(digest: string): Promise<boolean>;
  /** Where a blob lies in the bundle, for messages. */
  where(digest: string): string;
  /** A manifest or config, its digest checked. */
  read(digest: string): Promise<Buffer>;
  /** Calls `fn` with each wanted blob's bytes (once, in the bundle's order); `fn` checks the digest as it sends. */
  eachBlob(wanted: ReadonlySet<string>, fn: (digest: string, data: Readable) => Promise<void>): Promise<void>;
}

export const INDEX_TYPES = new Set([
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
]);

export function isIndex(mediaType: string): boolean {
  return INDEX_TYPES.has(mediaType);
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** `busybox:1.37.0` → `docker.io/library/busybox:1.37.0`, as containerd and docker name it. */
export function fullName(name: string): string {
  const first = name.split('/')[0] ?? '';
  const hasHost = name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasHost) return name;
  return name.includes('/') ? `docker.io/${name}` : `docker.io/library/${name}`;
}

/** The reference an OCI layout's index entry names: containerd's full name, else a ref.name that is one. */
export function nameOf(d: Descriptor): string | undefined {
  const a = d.annotations ?? {};
  const full = a['io.containerd.image.name'];
  if (full !== undefined) return fullName(full);
  const ref = a['org.opencontainers.image.ref.name'];
  return ref !== undefined && /[/:@]/.test(ref) ? fullName(ref) : undefined;
}

export function bundleError(path: string, message: string, hint?: string): InputError {
  return new InputError('images.bundle', `${path}: ${message}`, { path, ...(hint === undefined ? {} : { hint }) });
}

/** An index.json's named images; an unnamed entry is refused, naming it. */
export function layoutImages(path: string, index: Buffer): BundleImage[] {
  let doc: { manifests?: Descriptor[] };
  try {
    doc = JSON.parse(index.toString('utf8')) as { manifests?: Descriptor[] };
  } catch {
    throw bundleError(path, 'index.json is not JSON');
  }
  return (doc.manifests ?? []).map((d, i) => {
    const name = nameOf(d);
    if (name === undefined)
      throw bundleError(
        path,
        `index.json manifests[${i}] (${d.digest}) has no image name`,
        'write the bundle with full image names (io.containerd.image.name, or org.opencontainers.image.ref.name = registry/name:tag)',
      );
    return { name, top: d };
  });
}

/** An OCI image layout directory: `oci-layout`, `index.json`, `blobs/sha256/<hex>`. */
export async function openLayoutDir(path: string): Promise<Bundle> {
  const images = layoutImages(path, await readFile(join(path, 'index.json')));
  const file = (digest: string): string => join(path, 'blobs', ...digest.split(':'));
  const has = async (digest: string): Promise<boolean> =>
    /^sha256:[0-9a-f]{64}$/.test(digest) && (await stat(file(digest)).catch(() => undefined))?.isFile() === true;
  return {
    path,
    images,
    has,
    where: (digest) => file(digest),
    read: async (digest) => {
      const body = await readFile(file(digest)).catch(() => {
        throw bundleError(path, `blob ${digest} is missing (${file(digest)})`);
      });
      if (sha256(body) !== digest)
        throw bundleError(path, `${file(digest)} hashes to ${sha256(body)}, not ${digest}: the bundle was altered`);
      return body;
    },
    eachBlob: async (wanted, fn) => {
      for (const digest of wanted) if (await has(digest)) await fn(digest, createReadStream(file(digest)));
    },
  };
}
