// Reads an OCI image layout archive (the tar gobuild's oci-image writes) and the
// tar layers inside it, with tar-stream: the test checks what a registry or
// containerd would see, byte for byte.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { extract, type Header } from 'tar-stream';

export const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
  readonly platform?: { readonly os: string; readonly architecture: string };
}
export interface Manifest {
  readonly schemaVersion: number;
  readonly mediaType: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
}
export interface ImageConfig {
  readonly os: string;
  readonly architecture: string;
  readonly created: string;
  readonly config: {
    readonly Entrypoint?: string[];
    readonly Cmd?: string[];
    readonly User?: string;
    readonly Env?: string[];
    readonly Labels?: Record<string, string>;
  };
  readonly rootfs: { readonly type: string; readonly diff_ids: readonly string[] };
  readonly history: readonly { readonly created_by?: string }[];
}

/** One entry of a layer: its header, and its bytes for regular files. */
export interface LayerEntry {
  readonly header: Header;
  readonly data: Buffer;
}

export interface OciArchive {
  /** Every file of the archive by path (oci-layout, index.json, blobs/sha256/…). */
  readonly files: ReadonlyMap<string, Buffer>;
  /** Entry headers in archive order. */
  readonly headers: readonly Header[];
  readonly index: { readonly schemaVersion: number; readonly manifests: readonly Descriptor[] };
  blob(digest: string): Buffer;
}

/** Every entry of a tar stream, in order. */
export async function readTar(input: NodeJS.ReadableStream | Buffer): Promise<LayerEntry[]> {
  const ex = extract();
  const entries: LayerEntry[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        entries.push({ header, data: Buffer.concat(chunks) });
        next();
      });
      stream.on('error', reject);
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  if (Buffer.isBuffer(input)) ex.end(input);
  else input.pipe(ex);
  await done;
  return entries;
}

export async function readArchive(file: string): Promise<OciArchive> {
  const entries = await readTar(createReadStream(file));
  const files = new Map(entries.filter((e) => e.header.type === 'file').map((e) => [e.header.name, e.data]));
  const need = (name: string): Buffer => {
    const b = files.get(name);
    if (b === undefined) throw new Error(`${file}: no ${name}`);
    return b;
  };
  return {
    files,
    headers: entries.map((e) => e.header),
    index: JSON.parse(need('index.json').toString('utf8')) as OciArchive['index'],
    blob: (digest) => need(`blobs/sha256/${digest.replace(/^sha256:/, '')}`),
  };
}

/** The entries of a gzip'd layer blob. */
export function layerEntries(blob: Buffer): Promise<LayerEntry[]> {
  return readTar(gunzipSync(blob));
}

/** The file at PATH (no leading slash) in the topmost layer holding it. */
export async function fileInImage(a: OciArchive, m: Manifest, path: string): Promise<LayerEntry | undefined> {
  let found: LayerEntry | undefined;
  for (const l of m.layers) {
    const hit = (await layerEntries(a.blob(l.digest))).find((e) => e.header.name === path);
    if (hit !== undefined) found = hit;
  }
  return found;
}
