// Image archives read with tar-stream, twice: a first pass hashes every entry
// (and keeps the small ones: index, manifests, configs), a second streams the
// blobs a push needs. Two layouts: a tar of an OCI image layout (`index.json`,
// `blobs/sha256/<hex>`: `ctr export`, `skopeo copy oci-archive:`, docker ≥ 25
// `docker save`), and the older `docker save` layout (`manifest.json` naming
// a config file and layer tars per image; also `skopeo copy docker-archive:`
// and `crane pull`'s default), converted honestly: an OCI manifest whose
// config is the archive's config file and whose layers are the archive's
// layer files as they are (`…layer.v1.tar`, or `+gzip` when a file is
// gzip-compressed), each by the digest of its own bytes — nothing is
// recompressed or rewritten, so what the registry holds is what the archive held.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { bundleError, fullName, layoutImages, sha256, type Bundle, type BundleImage } from './bundle.js';

interface Entry {
  readonly name: string;
  readonly digest: string;
  readonly size: number;
  readonly gzip: boolean;
  /** Kept when small (≤ 1 MiB): index, manifests, configs. */
  readonly content?: Buffer;
}

const KEEP = 1024 * 1024;

function clean(name: string): string {
  return name.replace(/^\.\//, '');
}

async function scan(path: string): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  const extract = tar.extract();
  extract.on('entry', (h, stream, next) => {
    if (h.type !== 'file') {
      stream.resume();
      stream.on('end', next);
      return;
    }
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let size = 0;
    let head: Buffer | undefined;
    stream.on('data', (data: unknown) => {
      const c = data as Buffer;
      hash.update(c);
      head ??= c.subarray(0, 2);
      size += c.length;
      if (size <= KEEP) kept.push(c);
    });
    stream.on('end', () => {
      const name = clean(h.name);
      const gzip = head !== undefined && head[0] === 0x1f && head[1] === 0x8b;
      const digest = `sha256:${hash.digest('hex')}`;
      entries.set(name, { name, digest, size, gzip, ...(size <= KEEP ? { content: Buffer.concat(kept) } : {}) });
      next();
    });
  });
  await pipeline(await open(path), extract);
  return entries;
}

/** The archive's tar stream; a compressed one (`docker save | gzip`) is read through gunzip. */
async function open(path: string): Promise<Readable> {
  return (await isGzip(path)) ? createReadStream(path).pipe(createGunzip()) : createReadStream(path);
}

async function isGzip(path: string): Promise<boolean> {
  const s = createReadStream(path, { start: 0, end: 1 });
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  const b = Buffer.concat(parts);
  return b[0] === 0x1f && b[1] === 0x8b;
}

export async function readArchive(path: string): Promise<Bundle> {
  let entries: Map<string, Entry>;
  try {
    entries = await scan(path);
  } catch (error) {
    throw bundleError(path, `not a readable tar archive (${(error as Error).message})`);
  }
  /** Blob digest → the entry holding it (or synthetic content made here). */
  const byDigest = new Map<string, { entry?: string; content?: Buffer }>();
  let images: BundleImage[];
  const index = entries.get('index.json');
  if (index?.content !== undefined) {
    images = layoutImages(path, index.content);
    for (const e of entries.values()) {
      const m = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(e.name);
      if (m === null) continue;
      if (e.digest !== `sha256:${m[1] ?? ''}`)
        throw bundleError(path, `${e.name} hashes to ${e.digest}: the archive was altered`);
      byDigest.set(e.digest, { entry: e.name });
    }
  } else if (entries.get('manifest.json')?.content !== undefined) {
    images = dockerArchive(path, entries, byDigest);
  } else {
    throw bundleError(path, 'neither an OCI layout (index.json) nor a docker save archive (manifest.json)');
  }
  const contentOf = (digest: string): Buffer | undefined => {
    const at = byDigest.get(digest);
    return at?.content ?? (at?.entry === undefined ? undefined : entries.get(at.entry)?.content);
  };
  return {
    path,
    images,
    has: async (digest) => byDigest.has(digest),
    where: (digest) => `${path}:${byDigest.get(digest)?.entry ?? digest}`,
    read: async (digest) => {
      const body = contentOf(digest);
      if (body === undefined) throw bundleError(path, `blob ${digest} is missing or too large to be a manifest`);
      return body;
    },
    eachBlob: async (wanted, fn) => {
      // Synthetic blobs (converted manifests) first, then one pass through the archive.
      for (const d of wanted) {
        const made = byDigest.get(d)?.content;
        if (made !== undefined) await fn(d, streamOf(made));
      }
      const byEntry = new Map(
        [...wanted].flatMap((d) => {
          const e = byDigest.get(d)?.entry;
          return e === undefined || byDigest.get(d)?.content !== undefined ? [] : [[e, d] as const];
        }),
      );
      if (byEntry.size === 0) return;
      const extract = tar.extract();
      let failure: unknown;
      extract.on('entry', (h, stream, next) => {
        const digest = byEntry.get(clean(h.name));
        if (digest === undefined || failure !== undefined) {
          stream.resume();
          stream.on('end', next);
          return;
        }
        fn(digest, stream as unknown as Readable).then(
          () => next(),
          (error: unknown) => {
            failure = error;
            stream.resume();
            next();
          },
        );
      });
      await pipeline(await open(path), extract);
      if (failure !== undefined) throw failure;
    },
  };
}

function streamOf(b: Buffer): Readable {
  return Readable.from([b]);
}

interface DockerItem {
  readonly Config?: string;
  readonly RepoTags?: readonly string[] | null;
  readonly Layers?: readonly string[];
}

/** docker save's manifest.json → one OCI manifest per image, made of the archive's own files. */
function dockerArchive(
  path: string,
  entries: ReadonlyMap<string, Entry>,
  byDigest: Map<string, { entry?: string; content?: Buffer }>,
): BundleImage[] {
  let items: DockerItem[];
  try {
    items = JSON.parse(entries.get('manifest.json')?.content?.toString('utf8') ?? '') as DockerItem[];
  } catch {
    throw bundleError(path, 'manifest.json is not JSON');
  }
  const entry = (name: string | undefined, what: string): Entry => {
    const e = name === undefined ? undefined : entries.get(clean(name));
    if (e === undefined)
      throw bundleError(path, `manifest.json names ${what} ${name ?? '(none)'}, which the archive lacks`);
    byDigest.set(e.digest, { entry: e.name });
    return e;
  };
  return items.flatMap((item, i) => {
    const config = entry(item.Config, `the config of image ${i}`);
    const layers = (item.Layers ?? []).map((l) => entry(l, `a layer of image ${i}`));
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: config.digest, size: config.size },
        layers: layers.map((l) => ({
          mediaType: l.gzip ? 'application/vnd.oci.image.layer.v1.tar+gzip' : 'application/vnd.oci.image.layer.v1.tar',
          digest: l.digest,
          size: l.size,
        })),
      }),
    );
    const digest = sha256(manifest);
    byDigest.set(digest, { content: manifest });
    const top = { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest, size: manifest.length };
    const tags = item.RepoTags ?? [];
    if (tags.length === 0)
      throw bundleError(path, `image ${i} (${config.name}) has no tag`, 'save it by name: docker save NAME:TAG');
    return tags.map((t) => ({ name: fullName(t), top }));
  });
}
