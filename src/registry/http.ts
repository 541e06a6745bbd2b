// One GET with what registries need: extra trust anchors, a deadline for the
// whole exchange, a size cap, and redirects followed by hand so the
// Authorization header never leaves the registry's host (blob storage on S3
// or a CDN gets a pre-signed URL and must not see our credentials).
// HTTPS always; plain HTTP only to hosts the user named as insecure
// registries, and never as a fallback when TLS fails.
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { RegistryError } from './errors.js';

export interface HttpOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** PEM bundle trusted in addition to the system roots. */
  readonly ca?: readonly string[];
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  /** `host[:port]`s that may be reached over plain HTTP (--insecure-registry). */
  readonly insecure?: ReadonlySet<string>;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The URL that answered, after redirects. */
  readonly url: string;
}

const MAX_REDIRECTS = 5;

export async function registryGet(url: string, options: HttpOptions): Promise<HttpResponse> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
  const origin = new URL(url).host;
  let current = url;
  let headers = { ...options.headers };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    const res = await once(current, headers, options, signal);
    const location = res.headers.location;
    if (res.status < 300 || res.status >= 400 || location === undefined) return res;
    const next = new URL(location, current);
    if (!allowed(next, options.insecure)) {
      throw new RegistryError(
        'registry.insecure-redirect',
        `${current} redirects to ${next.protocol} URL of ${next.host}; only https is followed, http only to --insecure-registry hosts`,
      );
    }
    if (next.host !== origin) {
      const { authorization: _dropped, Authorization: _alsoDropped, ...rest } = headers;
      headers = rest;
    }
    current = next.toString();
  }
  throw new RegistryError('registry.redirects', `${url}: more than ${MAX_REDIRECTS} redirects`);
}

function once(
  url: string,
  headers: Record<string, string>,
  options: HttpOptions,
  signal: AbortSignal,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (!allowed(u, options.insecure)) {
      reject(
        new RegistryError(
          'registry.insecure',
          `${u.protocol}//${u.host}: plain HTTP only to hosts given as --insecure-registry`,
          { hint: `--insecure-registry ${u.host} if this registry really has no TLS` },
        ),
      );
      return;
    }
    // Giving `ca` replaces Node's roots; keep them so public registries still verify.
    const ca = options.ca === undefined || options.ca.length === 0 ? undefined : [...rootCertificates, ...options.ca];
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          reject(new RegistryError('registry.too-large', `${url}: response larger than ${options.maxBytes} bytes`));
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), url }),
      );
      res.on('error', reject);
    };
    const req =
      u.protocol === 'http:'
        ? httpRequest(u, { method: 'GET', headers, signal }, onResponse)
        : request(u, { method: 'GET', headers, signal, ...(ca === undefined ? {} : { ca }) }, onResponse);
    req.on('error', (error) => reject(wrapNetworkError(url, error, signal)));
    req.end();
  });
}

/** https anywhere; http only to a host named insecure, so a TLS failure is never retried in clear. */
function allowed(u: URL, insecure: ReadonlySet<string> | undefined): boolean {
  return u.protocol === 'https:' || (u.protocol === 'http:' && insecure?.has(u.host) === true);
}

function wrapNetworkError(url: string, error: Error, signal: AbortSignal): Error {
  if (error instanceof RegistryError) return error;
  const host = new URL(url).host;
  if (signal.aborted) return new RegistryError('registry.timeout', `${host}: no answer in time`, { cause: error });
  const code = (error as NodeJS.ErrnoException).code ?? error.message;
  return new RegistryError('registry.unreachable', `${host}: ${code}`, { cause: error });
}
