// An OCI distribution client for whole images (distribution-spec v1.1,
// "Pulling", "Pushing" and "Content discovery"): blobs by digest (HEAD,
// streamed GET verified while it arrives, cross-repository mount, upload in
// one PUT or in chunks with Content-Range, each chunk retried from the
// offset the registry reports), manifests (GET, HEAD, PUT). Auth is
// negotiated from the 401 challenge: Basic with the registry's credential, or
// a Bearer token for `repository:<name>:pull[,push]`.
import { createHash } from 'node:crypto';
import { Writable, type Readable } from 'node:stream';
import { parseChallenge } from './challenge.js';
import type { Credential } from './credentials.js';
import { RegistryError } from './errors.js';
import { header, transfer, type TransferOptions, type TransferRequest, type TransferResponse } from './request.js';

export const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
] as const;

export interface DistributionOptions extends TransferOptions {
  /** `host[:port]` as it is dialled and named in TLS. */
  readonly host: string;
  readonly credential?: Credential | undefined;
  /** Bytes per PATCH of a chunked upload; smaller blobs go in one PUT. */
  readonly chunkBytes?: number;
}

const DEFAULT_CHUNK = 32 * 1024 * 1024;

export class DistributionClient {
  readonly #o: DistributionOptions;
  readonly #auth = new Map<string, string>();

  constructor(options: DistributionOptions) {
    this.#o = options;
  }

  /** The options for another host (a token service, blob storage): no tunnel, which leads to the registry only. */
  #direct(): TransferOptions {
    const { dial: _tunnel, ...rest } = this.#o;
    return rest;
  }

  get host(): string {
    return this.#o.host;
  }

  #url(path: string): string {
    const scheme = this.#o.insecure?.has(this.#o.host) === true ? 'http' : 'https';
    return path.startsWith('http') ? path : `${scheme}://${this.#o.host}${path}`;
  }

  /** One request with the scope's authorization, negotiated once on a 401 (bodies must be re-sendable then). */
  async #send(req: TransferRequest, scope: string, retryable = true): Promise<TransferResponse> {
    const key = `${this.#o.host} ${scope}`;
    const auth = this.#auth.get(key);
    const withAuth = (a: string | undefined): TransferRequest => ({
      ...req,
      url: this.#url(req.url),
      headers: { ...req.headers, ...(a === undefined ? {} : { authorization: a }) },
    });
    const res = await transfer(withAuth(auth), this.#o);
    if (res.status !== 401 || !retryable) return res;
    const fresh = await this.#authorize(res, scope);
    this.#auth.set(key, fresh);
    return transfer(withAuth(fresh), this.#o);
  }

  async #authorize(res: TransferResponse, scope: string): Promise<string> {
    const challenge = parseChallenge(header(res, 'www-authenticate'));
    const c = this.#o.credential;
    const basic =
      c === undefined ? undefined : `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
    if (challenge?.scheme === 'basic') {
      if (basic === undefined)
        throw new RegistryError('registry.unauthorized', `${this.#o.host} wants credentials`, { status: 401 });
      return basic;
    }
    const realm = challenge?.params['realm'];
    if (challenge?.scheme !== 'bearer' || realm === undefined)
      throw new RegistryError('registry.unauthorized', `${this.#o.host}: HTTP 401 without a usable challenge`);
    const url = new URL(realm);
    if (challenge.params['service'] !== undefined) url.searchParams.set('service', challenge.params['service']);
    for (const s of scope.split(' ')) url.searchParams.append('scope', s);
    const token = await transfer(
      { method: 'GET', url: url.toString(), headers: basic === undefined ? {} : { authorization: basic } },
      url.host === this.#o.host ? this.#o : this.#direct(),
    );
    const body = JSON.parse(token.status === 200 ? token.body.toString('utf8') : '{}') as Record<string, unknown>;
    const value = typeof body['token'] === 'string' ? body['token'] : body['access_token'];
    if (typeof value !== 'string' || value === '')
      throw new RegistryError('registry.unauthorized', `${url.host}: token request answered HTTP ${token.status}`);
    return `Bearer ${value}`;
  }

  #fail(what: string, res: TransferResponse): never {
    const detail = res.body.toString('utf8').slice(0, 300).trim();
    throw new RegistryError(
      res.status === 404 ? 'registry.not-found' : res.status === 401 ? 'registry.unauthorized' : 'registry.status',
      `${this.#o.host}: ${what}: HTTP ${res.status}${detail === '' ? '' : ` ${detail}`}`,
      { status: res.status },
    );
  }

  async blobExists(repo: string, digest: string): Promise<boolean> {
    const res = await this.#send({ method: 'HEAD', url: `/v2/${repo}/blobs/${digest}`, headers: {} }, pull(repo));
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    return this.#fail(`HEAD blob ${digest} in ${repo}`, res);
  }

  /** The manifest's digest when `reference` (a tag or digest) exists in `repo`, else undefined. */
  async manifestDigest(repo: string, reference: string): Promise<string | undefined> {
    const accept = MANIFEST_TYPES.join(', ');
    const res = await this.#send(
      { method: 'HEAD', url: `/v2/${repo}/manifests/${reference}`, headers: { accept } },
      pull(repo),
    );
    if (res.status === 404) return undefined;
    if (res.status !== 200) return this.#fail(`HEAD manifest ${repo}:${reference}`, res);
    return header(res, 'docker-content-digest') ?? reference;
  }

  async getManifest(repo: string, reference: string): Promise<{ body: Buffer; mediaType: string; digest: string }> {
    const accept = MANIFEST_TYPES.join(', ');
    const res = await this.#send(
      { method: 'GET', url: `/v2/${repo}/manifests/${reference}`, headers: { accept } },
      pull(repo),
    );
    if (res.status !== 200) return this.#fail(`manifest ${repo}:${reference}`, res);
    const digest = sha256(res.body);
    if (reference.startsWith('sha256:') && digest !== reference)
      throw new RegistryError('registry.digest-mismatch', `${this.#o.host}/${repo}@${reference}: content is ${digest}`);
    const mediaType = (header(res, 'content-type') ?? '').split(';')[0]?.trim() ?? '';
    return { body: res.body, mediaType, digest };
  }

  /** Streams a blob into `sink`, following redirects (without credentials to other hosts); verifies its digest. */
  async getBlob(repo: string, digest: string, sink: Writable): Promise<number> {
    const hash = createHash('sha256');
    let bytes = 0;
    const tee = new Writable({
      write(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        bytes += chunk.length;
        sink.write(chunk, done);
      },
      final(done) {
        sink.end(done);
      },
    });
    let res = await this.#send(
      { method: 'GET', url: `/v2/${repo}/blobs/${digest}`, headers: {}, sink: tee },
      pull(repo),
    );
    for (let hop = 0; hop < 5 && res.status >= 300 && res.status < 400; hop += 1) {
      const location = header(res, 'location');
      if (location === undefined) break;
      const next = new URL(location, this.#url(`/v2/${repo}/blobs/${digest}`));
      if (next.protocol !== 'https:')
        throw new RegistryError('registry.insecure-redirect', `${this.#o.host}: blob redirect to ${next.protocol}`);
      res = await transfer({ method: 'GET', url: next.toString(), headers: {}, sink: tee }, this.#direct());
    }
    if (res.status !== 200) return this.#fail(`blob ${digest} of ${repo}`, res);
    const got = `sha256:${hash.digest('hex')}`;
    if (got !== digest)
      throw new RegistryError('registry.digest-mismatch', `${this.#o.host}/${repo} blob ${digest}: content is ${got}`);
    return bytes;
  }

  /** Cross-repository mount (distribution-spec "Mounting a blob from another repository"); false when refused. */
  async mountBlob(repo: string, digest: string, from: string): Promise<boolean> {
    const url = `/v2/${repo}/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`;
    const res = await this.#send({ method: 'POST', url, headers: {} }, `${push(repo)} ${pull(from)}`);
    if (res.status === 201) return true;
    const session = header(res, 'location');
    if (res.status === 202 && session !== undefined) await this.#cancel(repo, session);
    return false;
  }

  /**
   * Uploads a blob of `size` bytes read once, in order, from `data`: one PUT
   * when it fits a chunk, else PATCHes with Content-Range, a failed one sent
   * again (from memory) at the offset the registry reports. The digest is
   * computed from what is sent: content that does not hash to `digest` is
   * refused before the upload is committed (the session is cancelled) and
   * named by `what`.
   */
  async uploadBlob(repo: string, digest: string, size: number, data: Readable, what: string): Promise<void> {
    const scope = push(repo);
    const start = await this.#send({ method: 'POST', url: `/v2/${repo}/blobs/uploads/`, headers: {} }, scope);
    let location = header(start, 'location');
    if (start.status !== 202 || location === undefined) return this.#fail(`start upload to ${repo}`, start);
    const chunkBytes = this.#o.chunkBytes ?? DEFAULT_CHUNK;
    if (size <= chunkBytes) {
      // Monolithic: the whole blob in the PUT that commits it, once its digest is known to be right.
      const parts: Buffer[] = [];
      for await (const c of chunked(data, chunkBytes + 1)) parts.push(c);
      const body = Buffer.concat(parts);
      const got = sha256(body);
      if (got !== digest || body.length !== size) return this.#mismatch(repo, location, what, digest, got);
      const res = await this.#send(
        {
          method: 'PUT',
          url: withDigest(location, digest),
          headers: { 'content-type': 'application/octet-stream' },
          body,
        },
        scope,
      );
      if (res.status !== 201) return this.#fail(`upload ${digest} to ${repo}`, res);
      return;
    }
    const chunks = chunked(data, chunkBytes);
    const hash = createHash('sha256');
    let offset = 0;
    for await (const body of chunks) {
      hash.update(body);
      location = await this.#patch(repo, location, body, offset);
      offset += body.length;
    }
    if (offset !== size)
      return this.#mismatch(repo, location, what, digest, `${sha256Of(hash)} (${offset} bytes, not ${size})`);
    // The registry would refuse the commit too; refusing first names the bundle's file and keeps nothing.
    if (sha256Of(hash) !== digest) return this.#mismatch(repo, location, what, digest, sha256Of(hash));
    const done = await this.#send({ method: 'PUT', url: withDigest(location, digest), headers: {} }, scope);
    if (done.status !== 201) return this.#fail(`commit ${digest} to ${repo}`, done);
  }

  /** One chunk at `offset`; after a failure, sent again once the registry says it holds exactly what came before. */
  async #patch(repo: string, location: string, body: Buffer, offset: number): Promise<string> {
    const scope = push(repo);
    for (let attempt = 1; ; attempt += 1) {
      let res: TransferResponse | undefined;
      let failure: unknown;
      try {
        res = await this.#send(
          {
            method: 'PATCH',
            url: location,
            headers: {
              'content-type': 'application/octet-stream',
              'content-range': `${offset}-${offset + body.length - 1}`,
            },
            body,
          },
          scope,
        );
        if (res.status === 202) return header(res, 'location') ?? location;
      } catch (error) {
        failure = error;
      }
      if (attempt >= 3) {
        if (res !== undefined) return this.#fail(`upload bytes ${offset}- to ${repo}`, res);
        throw failure;
      }
      const status = await this.#send({ method: 'GET', url: location, headers: {} }, scope);
      const range = /^0-(\d+)$/.exec(header(status, 'range') ?? '');
      const held = range === null ? 0 : Number(range[1]) + 1;
      if (status.status !== 204 || held !== offset)
        throw new RegistryError('registry.upload-lost', `${this.#o.host}: an upload to ${repo} lost its place`);
    }
  }

  async #cancel(repo: string, location: string): Promise<void> {
    await this.#send({ method: 'DELETE', url: location, headers: {} }, push(repo)).catch(() => undefined);
  }

  async #mismatch(repo: string, location: string, what: string, want: string, got: string): Promise<never> {
    await this.#cancel(repo, location);
    throw new RegistryError(
      'images.digest-mismatch',
      `${what}: content hashes to ${got}, but it must be ${want}; not pushed`,
    );
  }

  async putManifest(repo: string, reference: string, body: Buffer, mediaType: string): Promise<void> {
    const res = await this.#send(
      { method: 'PUT', url: `/v2/${repo}/manifests/${reference}`, headers: { 'content-type': mediaType }, body },
      push(repo),
    );
    if (res.status !== 201) this.#fail(`PUT manifest ${repo}:${reference}`, res);
  }
}

function pull(repo: string): string {
  return `repository:${repo}:pull`;
}

function push(repo: string): string {
  return `repository:${repo}:pull,push`;
}

function withDigest(location: string, digest: string): string {
  return `${location}${location.includes('?') ? '&' : '?'}digest=${encodeURIComponent(digest)}`;
}

function sha256Of(hash: ReturnType<typeof createHash>): string {
  return `sha256:${hash.copy().digest('hex')}`;
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The stream in pieces of `size` bytes (the last one shorter). */
async function* chunked(s: Readable, size: number): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let bytes = 0;
  for await (const c of s) {
    let chunk = c as Buffer;
    while (bytes + chunk.length >= size) {
      const take = size - bytes;
      yield Buffer.concat([...held, chunk.subarray(0, take)]);
      chunk = chunk.subarray(take);
      held = [];
      bytes = 0;
    }
    if (chunk.length > 0) {
      held.push(chunk);
      bytes += chunk.length;
    }
  }
  if (bytes > 0) yield Buffer.concat(held);
}
