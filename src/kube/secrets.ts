// One Kubernetes API call: GET /api/v1/namespaces/{ns}/secrets/{name}, the
// only access the webhook's ClusterRole grants (get on secrets, no list or
// watch). A missing Secret is undefined, as the kubelet ignores a missing
// pull secret; everything else that is not 200 is a KubeError. Neither the
// token nor the Secret's data ever go into a message.
import { request } from 'node:https';
import type { KubeAccess } from './config.js';
import { KubeError } from './errors.js';

export interface SecretData {
  readonly type: string;
  /** Values base64-decoded. */
  readonly data: Readonly<Record<string, Buffer>>;
}

/** Secrets are at most 1 MiB; the JSON around the base64 adds a third. */
const MAX_BYTES = 2 * 1024 * 1024;
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export async function getSecret(
  access: KubeAccess,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<SecretData | undefined> {
  if (!NAME.test(namespace) || !NAME.test(name))
    throw new KubeError('kube.bad-name', `${namespace}/${name} is not a valid Secret name`);
  const path = `/api/v1/namespaces/${namespace}/secrets/${name}`;
  const res = await get(access, path, timeoutMs);
  if (res.status === 404) return undefined;
  if (res.status === 401)
    throw new KubeError(
      'kube.unauthorized',
      `${access.server} refused the credentials of the ${access.origin} (HTTP 401)`,
      { status: 401 },
    );
  if (res.status === 403) {
    throw new KubeError('kube.forbidden', `not allowed to get Secret ${namespace}/${name} (HTTP 403)`, {
      status: 403,
      hint: 'kubemix guard install renders a ClusterRole with get on secrets; apply it, or run guard serve with --no-pull-secrets',
    });
  }
  if (res.status !== 200)
    throw new KubeError('kube.status', `GET Secret ${namespace}/${name}: HTTP ${res.status}`, { status: res.status });
  let doc: { type?: unknown; data?: unknown };
  try {
    doc = JSON.parse(res.body.toString('utf8')) as typeof doc;
  } catch {
    throw new KubeError('kube.bad-json', `Secret ${namespace}/${name}: the answer is not JSON`);
  }
  const data: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(typeof doc.data === 'object' && doc.data !== null ? doc.data : {})) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'base64');
  }
  return { type: typeof doc.type === 'string' ? doc.type : '', data };
}

function get(access: KubeAccess, path: string, timeoutMs: number): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const token = access.token();
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'kubemix' };
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    const url = new URL(path, `${access.server}/`);
    const req = request(
      url,
      {
        method: 'GET',
        headers,
        signal: AbortSignal.timeout(timeoutMs),
        ...(access.ca === undefined ? {} : { ca: access.ca }),
        ...(access.clientCert === undefined ? {} : { cert: access.clientCert, key: access.clientKey }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BYTES) {
            res.destroy();
            reject(new KubeError('kube.too-large', `${url.pathname}: answer larger than ${MAX_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        error instanceof KubeError
          ? error
          : new KubeError(
              'kube.unreachable',
              `${url.host}: ${error.name === 'TimeoutError' || error.name === 'AbortError' ? 'no answer in time' : (error.code ?? error.message)}`,
              { cause: error },
            ),
      );
    });
    req.end();
  });
}
