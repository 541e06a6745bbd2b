// One registry HTTP exchange of any method, with a body sent from a buffer or
// a stream and, for a GET of a blob, the answer streamed to a sink instead of
// held: what pushing and pulling image bundles needs beyond registryGet
// (http.ts). HTTPS always, plain HTTP only to hosts named insecure; `dial`
// hands the TLS connection a stream of the caller's (an SSH tunnel to a
// registry the deployer has no route to).
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import type { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { RegistryError } from './errors.js';

/** Opens a byte stream to `host:port` (the TLS handshake runs over it). */
export type Dial = (host: string, port: number) => Promise<Duplex>;

export interface TransferOptions {
  readonly ca: readonly string[];
  readonly timeoutMs: number;
  readonly insecure?: ReadonlySet<string>;
  readonly dial?: Dial;
  readonly signal?: AbortSignal;
}

export interface TransferRequest {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer | Readable;
  /** A 2xx GET's body goes here, streamed; otherwise bodies are read up to 4 MiB. */
  readonly sink?: Writable;
}

export interface TransferResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const MAX_BODY = 4 * 1024 * 1024;

export function header(res: TransferResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function transfer(req: TransferRequest, o: TransferOptions): Promise<TransferResponse> {
  const u = new URL(req.url);
  const plain = u.protocol === 'http:';
  if (plain && o.insecure?.has(u.host) !== true)
    throw new RegistryError('registry.insecure', `${u.host}: plain HTTP only to hosts given as --insecure-registry`);
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal === undefined ? deadline : AbortSignal.any([deadline, o.signal]);
  const ca = o.ca.length === 0 ? undefined : [...rootCertificates, ...o.ca];
  const port = Number(u.port || (plain ? 80 : 443));
  const tunnel = o.dial === undefined ? undefined : await o.dial(u.hostname, port);
  const headers: Record<string, string> = { 'user-agent': 'kubemix', ...req.headers };
  if (Buffer.isBuffer(req.body)) headers['content-length'] = String(req.body.length);
  return new Promise<TransferResponse>((resolve, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      if (req.sink !== undefined && ok && req.method === 'GET') {
        pipeline(res, req.sink).then(
          () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) }),
          (error: Error) => reject(wrap(u, error, signal)),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_BODY) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (error) => reject(wrap(u, error, signal)));
    };
    const base = { method: req.method, headers, signal };
    const r = plain
      ? httpRequest(u, tunnel === undefined ? base : { ...base, createConnection: () => tunnel }, onResponse)
      : request(
          u,
          {
            ...base,
            ...(ca === undefined ? {} : { ca }),
            ...(tunnel === undefined
              ? {}
              : {
                  createConnection: () => tlsConnect({ socket: tunnel, servername: u.hostname, ...(ca ? { ca } : {}) }),
                }),
          },
          onResponse,
        );
    r.on('error', (error) => reject(wrap(u, error, signal)));
    if (req.body === undefined) r.end();
    else if (Buffer.isBuffer(req.body)) r.end(req.body);
    else pipeline(req.body, r).catch((error: Error) => reject(wrap(u, error, signal)));
  });
}

function wrap(u: URL, error: Error, signal: AbortSignal): Error {
  if (error instanceof RegistryError) return error;
  if (signal.aborted) return new RegistryError('registry.timeout', `${u.host}: no answer in time`, { cause: error });
  const code = (error as NodeJS.ErrnoException).code ?? error.message;
  return new RegistryError('registry.unreachable', `${u.host}: ${code}`, { cause: error });
}
