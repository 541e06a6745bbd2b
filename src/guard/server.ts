// The admission webhook's HTTPS server: /mutate, /validate, /healthz,
// /metrics. Bodies are capped, every request has a deadline, every answer is
// logged as one JSON line through the injected writer (never the object or
// any secret), and close() stops accepting, lets requests in flight finish,
// then returns.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { mutate, validate, type AdmitContext } from './admit.js';
import { decisionDeadlineMs } from './deadline.js';
import { Metrics } from './metrics.js';
import { parseReview, ReviewError, reviewResponse, type Verdict } from './review.js';

export interface GuardServerOptions extends AdmitContext {
  readonly cert: string;
  readonly key: string;
  /** Structured log lines (one JSON object each). */
  readonly log: (line: Record<string, unknown>) => void;
  readonly maxBodyBytes?: number;
  /** The decision's deadline when the call names none (the API server's `?timeout=` does). */
  readonly requestTimeoutMs?: number;
}

export interface GuardServer {
  readonly server: Server;
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

/** Longer than the API server keeps an idle connection (90 s). */
export const KEEP_ALIVE_MS = 120_000;
/** How long close() waits for answers in flight before it cuts the connections (a pod gets 30 s by default). */
const DRAIN_MS = 25_000;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ADMIT: Readonly<
  Record<string, (o: Parameters<typeof mutate>[0], c: AdmitContext, namespace?: string) => Promise<Verdict>>
> = { '/mutate': mutate, '/validate': validate };

export function createGuardServer(options: GuardServerOptions): GuardServer {
  const metrics = new Metrics();
  const maxBody = options.maxBodyBytes ?? 3 * 1024 * 1024;
  const timeout = options.requestTimeoutMs ?? 9_000;
  // Node checks request timeouts every connectionsCheckingInterval (30 s by default); a webhook's deadline is seconds.
  const server = createServer(
    { cert: options.cert, key: options.key, connectionsCheckingInterval: 1000 },
    (req, res) => {
      const started = process.hrtime.bigint();
      const url = new URL(req.url ?? '/', 'https://guard');
      const route = url.pathname;
      let sent = false;
      // Once closing, a kept-alive connection ends after its answer instead of waiting 120 s for the next call.
      res.once('finish', () => void (closing && server.closeIdleConnections()));
      const deadline = decisionDeadlineMs(url.searchParams.get('timeout'), timeout);
      void handle(req, route, options, maxBody, deadline, metrics)
        .then(
          (reply) => void (sent = send(req, res, reply.status, reply.type, reply.body, closing)),
          (error: unknown) => {
            const status = error instanceof HttpError ? error.status : error instanceof ReviewError ? 400 : 500;
            sent = send(
              req,
              res,
              status,
              'application/json',
              JSON.stringify({ error: status === 500 ? 'internal error' : (error as Error).message }),
              closing,
            );
            if (status === 500 && sent)
              options.log({ level: 'error', msg: 'request failed', route, error: String(error) });
          },
        )
        .finally(() => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          const known = route in ADMIT || route === '/healthz' || route === '/metrics' ? route : 'other';
          // No answer of ours reached the client: Node answered 408 itself, or the client went away first.
          const status = sent ? res.statusCode : timedOut.has(req.socket) ? 408 : 'aborted';
          metrics.observe(known, status, seconds);
          const ms = Math.round(seconds * 1e6) / 1e3;
          if (known in ADMIT || !sent || res.statusCode >= 400)
            options.log({ level: 'info', msg: 'request', route: known, status, ms });
        });
    },
  );
  const timedOut = new WeakSet<object>();
  let closing = false;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, timedOut),
  );
  server.requestTimeout = timeout + 1000;
  server.headersTimeout = timeout;
  // The API server keeps connections to a webhook for up to 90 s idle (client-go's IdleConnTimeout); closing
  // them first, after Node's default 5 s, races its next call on them: a call written as the connection closes
  // fails, and a POST is not sent again. Longer than the client's, so the client is the one that closes.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return {
    server,
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const a = server.address();
          resolve(typeof a === 'object' && a !== null ? a.port : port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
        // A connection still busy then is cut, before the kubelet's SIGKILL would end the process mid-answer.
        setTimeout(() => server.closeAllConnections(), DRAIN_MS).unref();
      }),
  };
}

interface Reply {
  readonly status: number;
  readonly type: string;
  readonly body: string;
}

async function handle(
  req: IncomingMessage,
  route: string,
  o: GuardServerOptions,
  maxBody: number,
  timeout: number,
  metrics: Metrics,
): Promise<Reply> {
  if (route === '/healthz') return { status: 200, type: 'text/plain', body: 'ok\n' };
  if (route === '/metrics') return { status: 200, type: 'text/plain; version=0.0.4', body: metrics.render() };
  const admit = ADMIT[route];
  if (admit === undefined) throw new HttpError(404, `no route ${route}`);
  if (req.method !== 'POST') throw new HttpError(405, 'POST an AdmissionReview');
  const body = await readBody(req, maxBody);
  const review = parseReview(body);
  const verdict = await withDeadline(admit(review.object, o, review.namespace), timeout);
  return { status: 200, type: 'application/json', body: JSON.stringify(reviewResponse(review.uid, verdict)) };
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      reject(new HttpError(413, `body larger than ${max} bytes`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        reject(new HttpError(413, `body larger than ${max} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that goes away mid-body (or is cut off by the request timeout) ends the request without 'end'.
    req.on('close', () => reject(new HttpError(400, 'request closed before its body was complete')));
  });
}

/** The API server gives up after its own timeout; answering later helps no one. */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError(503, `no decision within ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Whether the answer was sent (not when the client is gone or Node answered already). The request's socket
 * says whether the client is there: a response has none of its own while the one before it on a keep-alive
 * connection is still being written, and Node sends it once that one is done (a second call sent as soon as
 * the first answer arrived was never answered: the API server's webhook call ran out of time).
 */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  closing: boolean,
): boolean {
  if (res.headersSent || res.destroyed || req.socket.destroyed) return false;
  // While draining: the connection ends after this answer (an API server keeps calling on an open one).
  if (closing) res.setHeader('connection', 'close');
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}

/**
 * What Node's HTTP server answers a broken request by default (408 on its
 * request timeout, 431 on oversized headers, else 400), remembering the
 * timed-out sockets so the metrics count those requests as 408.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, timedOut: WeakSet<object>): void {
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const reason =
    status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  // Only when no answer of ours has started on this socket, as Node's own handler does.
  const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
  if (error.code !== 'ECONNRESET' && socket.writable && !answering) {
    if (status === 408) timedOut.add(socket);
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy();
}
