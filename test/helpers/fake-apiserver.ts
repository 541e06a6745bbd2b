// A stand-in for kube-apiserver, not one: HTTPS on loopback answering only
// GET /api/v1/namespaces/{ns}/secrets/{name}, and only with the bearer token
// it was given (401 otherwise), as the real one answers a service account
// allowed `get` on secrets. Enough to test the webhook's Secret read; no
// RBAC, no other API. There is no kube-apiserver on this machine.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';

export interface StoredSecret {
  readonly type: string;
  /** Values as plain text; served base64 as the API does. */
  readonly data: Readonly<Record<string, string>>;
}

export interface FakeApiServer {
  readonly url: string;
  /** Every request: method, path and whether the token was right. */
  readonly requests: { method: string; path: string; authorized: boolean }[];
  close(): Promise<void>;
}

const SECRET_PATH = /^\/api\/v1\/namespaces\/([a-z0-9-]+)\/secrets\/([a-z0-9.-]+)$/;

export async function startFakeApiServer(
  tls: { cert: string; key: string },
  token: string,
  secrets: Readonly<Record<string, StoredSecret>>,
): Promise<FakeApiServer> {
  const requests: FakeApiServer['requests'] = [];
  const status = (code: number, reason: string) =>
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
  const server: Server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const authorized = req.headers.authorization === `Bearer ${token}`;
    requests.push({ method: req.method ?? '', path, authorized });
    res.setHeader('content-type', 'application/json');
    if (!authorized) return void res.writeHead(401).end(status(401, 'Unauthorized'));
    const m = SECRET_PATH.exec(path);
    if (req.method !== 'GET' || m === null) return void res.writeHead(404).end(status(404, 'NotFound'));
    const secret = secrets[`${m[1]}/${m[2]}`];
    if (secret === undefined) return void res.writeHead(404).end(status(404, 'NotFound'));
    const data = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    );
    res.writeHead(200).end(
      JSON.stringify({
        kind: 'Secret',
        apiVersion: 'v1',
        metadata: { name: m[2], namespace: m[1] },
        type: secret.type,
        data,
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A kubeconfig for the stand-in: its CA inline, the token as a user token. */
export function kubeconfigFor(url: string, ca: string, token: string): string {
  const caData = Buffer.from(ca).toString('base64');
  return `apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n  - name: test\n    cluster:\n      server: ${url}\n      certificate-authority-data: ${caData}\ncontexts:\n  - name: test\n    context:\n      cluster: test\n      user: guard\nusers:\n  - name: guard\n    user:\n      token: ${token}\n`;
}
