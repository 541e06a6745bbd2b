// `kubemix images pull`: every image of the cluster into an OCI image layout
// directory, on a connected machine. An index is kept byte for byte with
// every platform it lists (a registry refuses an index whose platforms are not
// all there, and a changed index would change the digest pods pin), so the
// bundle holds at least every platform the cluster's nodes pull. Blobs are
// written beside their place and renamed once their digest checked: a pull
// that was cut goes on where it stopped; index.json is rewritten after each image.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterImage } from '../model/images.js';
import type { DistributionClient } from '../registry/distribution.js';
import { isIndex, sha256, type Descriptor } from './bundle.js';

export interface PullSource {
  readonly client: DistributionClient;
  /** Repository on that host: the upstream path, or under a mirror's prefix. */
  readonly repo: string;
}

export type PullEvent = {
  readonly image: string;
  readonly digest: string;
  readonly blobs: number;
  readonly bytes: number;
};

export async function pullImages(
  images: readonly ClusterImage[],
  out: string,
  sourceOf: (image: ClusterImage) => PullSource,
  report: (e: PullEvent) => void = () => undefined,
): Promise<void> {
  await mkdir(join(out, 'blobs', 'sha256'), { recursive: true });
  await writeFile(join(out, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}\n');
  const indexPath = join(out, 'index.json');
  const existing = await readFile(indexPath, 'utf8').then(
    (t) => (JSON.parse(t) as { manifests?: Descriptor[] }).manifests ?? [],
    () => [] as Descriptor[],
  );
  const entries = new Map(existing.map((d) => [d.annotations?.['io.containerd.image.name'] ?? d.digest, d]));
  const file = (digest: string): string => join(out, 'blobs', ...digest.split(':'));
  for (const image of images) {
    const { client, repo } = sourceOf(image);
    let blobs = 0;
    let bytes = 0;
    const keep = async (digest: string, size: number | undefined): Promise<boolean> =>
      (await stat(file(digest)).catch(() => undefined))?.size === size && size !== undefined;
    const blob = async (d: Descriptor): Promise<void> => {
      if (await keep(d.digest, d.size)) return;
      const partial = `${file(d.digest)}.partial`;
      try {
        bytes += await client.getBlob(repo, d.digest, createWriteStream(partial));
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      await rename(partial, file(d.digest));
      blobs += 1;
    };
    const manifest = async (reference: string): Promise<Descriptor> => {
      const m = await client.getManifest(repo, reference);
      await writeFile(file(m.digest), m.body);
      const doc = JSON.parse(m.body.toString('utf8')) as {
        mediaType?: string;
        manifests?: Descriptor[];
        config?: Descriptor;
        layers?: Descriptor[];
      };
      const mediaType = m.mediaType !== '' ? m.mediaType : (doc.mediaType ?? '');
      if (isIndex(mediaType)) for (const child of doc.manifests ?? []) await manifest(child.digest);
      else for (const b of [...(doc.config === undefined ? [] : [doc.config]), ...(doc.layers ?? [])]) await blob(b);
      return { mediaType, digest: sha256(m.body), size: m.body.length };
    };
    const top = await manifest(image.digest ?? image.tag ?? 'latest');
    const name = image.ref;
    entries.set(name, {
      ...top,
      annotations: {
        'io.containerd.image.name': name,
        'org.opencontainers.image.ref.name': image.tag ?? image.digest ?? 'latest',
      },
    });
    const index = {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [...entries.values()],
    };
    await writeFile(`${indexPath}.partial`, `${JSON.stringify(index, null, 2)}\n`);
    await rename(`${indexPath}.partial`, indexPath);
    report({ image: name, digest: top.digest, blobs, bytes });
  }
}
