// Pushes images built in the test with plain distribution API calls: blobs
// by monolithic upload, manifests and indexes by PUT. No docker, no SDK.
// A target without a CA is a plain-HTTP (insecure) registry.
import { createHash } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';

const base = (t: Target): string => `${t.ca === undefined ? 'http' : 'https'}://${t.host}`;

export interface Target {
  readonly host: string;
  /** undefined: plain HTTP. */
  readonly ca: string | undefined;
  readonly authorization?: string;
  /** Name resolution for the registry's own host name (its redirects use it). */
  readonly lookup?: LookupFunction;
}

interface Reply {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: string;
}

export function call(
  method: string,
  url: string,
  target: Target,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = {
      ...headers,
      ...(target.authorization === undefined ? {} : { authorization: target.authorization }),
    };
    if (body !== undefined) h['content-length'] = String(body.length);
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          location: res.headers.location,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    };
    const lookup = target.lookup === undefined ? {} : { lookup: target.lookup };
    const req =
      target.ca === undefined
        ? httpRequest(url, { method, headers: h, timeout: 10_000, ...lookup }, onResponse)
        : request(url, { method, headers: h, ca: target.ca, timeout: 10_000, ...lookup }, onResponse);
    req.on('error', reject);
    req.end(body);
  });
}

export const digestOf = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export async function pushBlob(t: Target, repo: string, data: Buffer): Promise<{ digest: string; size: number }> {
  const digest = digestOf(data);
  const start = await call('POST', `${base(t)}/v2/${repo}/blobs/uploads/`, t);
  if (start.status !== 202 || start.location === undefined)
    throw new Error(`upload start ${start.status} ${start.body}`);
  const url = new URL(start.location, base(t));
  url.searchParams.set('digest', digest);
  const put = await call('PUT', url.toString(), t, { 'content-type': 'application/octet-stream' }, data);
  if (put.status !== 201) throw new Error(`blob put ${put.status} ${put.body}`);
  return { digest, size: data.length };
}

export async function pushManifest(
  t: Target,
  repo: string,
  reference: string,
  mediaType: string,
  doc: unknown,
): Promise<{ digest: string; size: number; mediaType: string }> {
  const body = Buffer.from(JSON.stringify(doc));
  const put = await call('PUT', `${base(t)}/v2/${repo}/manifests/${reference}`, t, { 'content-type': mediaType }, body);
  if (put.status !== 201) throw new Error(`manifest put ${repo}:${reference} ${put.status} ${put.body}`);
  return { digest: digestOf(body), size: body.length, mediaType };
}

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

export interface Platform {
  readonly os: 'linux' | 'windows';
  readonly osVersion?: string;
}

/** One image: a config naming the platform and one small layer. */
export async function pushImage(
  t: Target,
  repo: string,
  reference: string,
  p: Platform,
  mediaType = OCI_MANIFEST,
): Promise<{ digest: string; size: number; mediaType: string }> {
  const docker = mediaType === DOCKER_MANIFEST;
  const config = await pushBlob(
    t,
    repo,
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: p.os,
        ...(p.osVersion === undefined ? {} : { 'os.version': p.osVersion }),
        rootfs: { type: 'layers', diff_ids: [] },
      }),
    ),
  );
  const layer = await pushBlob(t, repo, Buffer.from(`layer of ${repo} ${p.os} ${p.osVersion ?? ''}`));
  return pushManifest(t, repo, reference, mediaType, {
    schemaVersion: 2,
    mediaType,
    config: {
      mediaType: docker ? 'application/vnd.docker.container.image.v1+json' : 'application/vnd.oci.image.config.v1+json',
      ...config,
    },
    layers: [
      {
        mediaType: docker
          ? 'application/vnd.docker.image.rootfs.diff.tar.gzip'
          : 'application/vnd.oci.image.layer.v1.tar+gzip',
        ...layer,
      },
    ],
  });
}

/** An index over per-platform images pushed by digest first. */
export async function pushIndex(t: Target, repo: string, tag: string, platforms: readonly Platform[]): Promise<string> {
  const manifests = [];
  for (const p of platforms) {
    const m = await pushImage(t, repo, 'tmp', p);
    manifests.push({
      ...m,
      platform: {
        architecture: 'amd64',
        os: p.os,
        ...(p.osVersion === undefined ? {} : { 'os.version': p.osVersion }),
      },
    });
  }
  return (await pushManifest(t, repo, tag, OCI_INDEX, { schemaVersion: 2, mediaType: OCI_INDEX, manifests })).digest;
}
