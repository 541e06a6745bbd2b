// The distribution API calls lint and the webhook need: a manifest (with the
// Accept headers for OCI and Docker indexes and manifests) and a blob, with
// anonymous, Basic and Bearer-token auth negotiated from the 401 challenge.
import { createHash } from 'node:crypto';
import { parseChallenge } from './challenge.js';
import type { Credential, Credentials } from './credentials.js';
import { RegistryError } from './errors.js';
import { registryGet, type HttpResponse } from './http.js';
import type { RegistryRef } from './reference.js';

export const MEDIA = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;
const MANIFEST_ACCEPT = Object.values(MEDIA).join(', ');

export interface ClientOptions {
  readonly credentials: Credentials;
  readonly ca: readonly string[];
  readonly timeoutMs: number;
  /** Hosts reached over plain HTTP (--insecure-registry); every other host is HTTPS only. */
  readonly insecure?: ReadonlySet<string>;
}

export interface Fetched {
  readonly body: Buffer;
  readonly mediaType: string;
  readonly digest: string;
}

/** Manifests and configs are small; anything bigger is not what we asked for. */
const MAX_BYTES = 4 * 1024 * 1024;

export class RegistryClient {
  readonly #options: ClientOptions;
  /** Authorization per host/repository, reused until the registry refuses it. */
  readonly #auth = new Map<string, string>();

  constructor(options: ClientOptions) {
    this.#options = options;
  }

  async manifest(ref: RegistryRef, reference: string = ref.reference, signal?: AbortSignal): Promise<Fetched> {
    const res = await this.#get(ref, `manifests/${reference}`, MANIFEST_ACCEPT, signal);
    const digest = sha256(res.body);
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw new RegistryError(
        'registry.digest-mismatch',
        `${ref.host}/${ref.repository}@${reference}: content has digest ${digest}`,
      );
    }
    const mediaType =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    return { body: res.body, mediaType, digest };
  }

  async blob(ref: RegistryRef, digest: string, signal?: AbortSignal): Promise<Buffer> {
    const res = await this.#get(ref, `blobs/${digest}`, '*/*', signal);
    if (sha256(res.body) !== digest)
      throw new RegistryError(
        'registry.digest-mismatch',
        `${ref.host}/${ref.repository} blob ${digest}: content differs`,
      );
    return res.body;
  }

  async #get(ref: RegistryRef, path: string, accept: string, signal: AbortSignal | undefined): Promise<HttpResponse> {
    const scheme = this.#options.insecure?.has(ref.host) === true ? 'http' : 'https';
    const url = `${scheme}://${ref.host}/v2/${ref.repository}/${path}`;
    const key = `${ref.host}/${ref.repository}`;
    let res = await this.#send(url, accept, this.#auth.get(key), signal);
    if (res.status === 401) {
      const authorization = await this.#authorize(ref, res, signal);
      this.#auth.set(key, authorization);
      res = await this.#send(url, accept, authorization, signal);
    }
    if (res.status !== 200) {
      throw new RegistryError(
        res.status === 404 ? 'registry.not-found' : 'registry.status',
        `${key}/${path}: HTTP ${res.status}`,
        { status: res.status },
      );
    }
    return res;
  }

  #send(
    url: string,
    accept: string,
    authorization: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const headers: Record<string, string> = { accept, 'user-agent': 'kubemix' };
    if (authorization !== undefined) headers['authorization'] = authorization;
    return registryGet(url, {
      headers,
      ca: this.#options.ca,
      timeoutMs: this.#options.timeoutMs,
      maxBytes: MAX_BYTES,
      ...this.#transport(),
      ...(signal === undefined ? {} : { signal }),
    });
  }

  #transport(): { insecure?: ReadonlySet<string> } {
    return this.#options.insecure === undefined ? {} : { insecure: this.#options.insecure };
  }

  async #authorize(ref: RegistryRef, res: HttpResponse, signal: AbortSignal | undefined): Promise<string> {
    const challenge = parseChallenge(headerOf(res, 'www-authenticate'));
    const credential = this.#options.credentials.get(ref.host);
    if (challenge?.scheme === 'basic') {
      if (credential === undefined)
        throw new RegistryError('registry.unauthorized', `${ref.host} wants credentials`, {
          status: 401,
          hint: 'add them with docker login or --registry-auth',
        });
      return basic(credential);
    }
    if (challenge?.scheme === 'bearer') return `Bearer ${await this.#token(ref, challenge.params, credential, signal)}`;
    throw new RegistryError('registry.unauthorized', `${ref.host}: HTTP 401 without a usable challenge`, {
      status: 401,
    });
  }

  /** The token endpoint (`realm`) with the pull scope for this repository. */
  async #token(
    ref: RegistryRef,
    params: Readonly<Record<string, string>>,
    credential: Credential | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const realm = params['realm'];
    if (realm === undefined)
      throw new RegistryError('registry.unauthorized', `${ref.host}: Bearer challenge without realm`);
    const url = new URL(realm);
    if (params['service'] !== undefined) url.searchParams.set('service', params['service']);
    url.searchParams.set('scope', params['scope'] ?? `repository:${ref.repository}:pull`);
    const headers: Record<string, string> = { 'user-agent': 'kubemix' };
    if (credential !== undefined) headers['authorization'] = basic(credential);
    const res = await registryGet(url.toString(), {
      headers,
      ca: this.#options.ca,
      timeoutMs: this.#options.timeoutMs,
      maxBytes: 1024 * 1024,
      ...this.#transport(),
      ...(signal === undefined ? {} : { signal }),
    });
    if (res.status !== 200)
      throw new RegistryError('registry.unauthorized', `${url.host}: token request answered HTTP ${res.status}`, {
        status: res.status,
      });
    const body = parseJson(res.body, `${url.host} token`) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || token === '')
      throw new RegistryError('registry.unauthorized', `${url.host}: token response without a token`);
    return token;
  }
}

function basic(c: Credential): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

function headerOf(res: HttpResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export function parseJson(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new RegistryError('registry.bad-json', `${what}: not JSON`, { cause: error });
  }
}
