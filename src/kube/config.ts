// How to reach the Kubernetes API: in the cluster from the pod's service
// account (token and CA mounted by the kubelet, the API server from the
// KUBERNETES_SERVICE_* variables), or outside it from a kubeconfig's current
// context. Only what kubemix needs: the server, its CA, a bearer token or a
// client certificate. The token file is read anew for each request because
// bound service-account tokens are rotated by the kubelet.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { KubeError } from './errors.js';

export interface KubeAccess {
  /** `https://host:port`, no trailing slash. */
  readonly server: string;
  /** PEM trust anchors for the API server; undefined: the system roots. */
  readonly ca: string | undefined;
  /** The bearer token now, or undefined when a client certificate authenticates. */
  token(): string | undefined;
  readonly clientCert?: string;
  readonly clientKey?: string;
  /** Where this came from, for messages: never a secret. */
  readonly origin: string;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The pod's service account, or undefined when not running in a cluster. */
export function inClusterAccess(
  env: Readonly<Record<string, string | undefined>>,
  dir: string = SERVICE_ACCOUNT_DIR,
): KubeAccess | undefined {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '443';
  if (host === undefined || host === '') return undefined;
  const tokenPath = `${dir}/token`;
  let ca: string;
  try {
    readFileSync(tokenPath);
    ca = readFileSync(`${dir}/ca.crt`, 'utf8');
  } catch {
    return undefined;
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca,
    token: () => readFileSync(tokenPath, 'utf8').trim(),
    origin: 'in-cluster service account',
  };
}

type Named<T> = { name?: string } & T;
interface Kubeconfig {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
}

/** The current context of a kubeconfig file: server, CA, and a token or client certificate. */
export function kubeconfigAccess(path: string): KubeAccess {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new KubeError('kube.kubeconfig', `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? '?'})`);
  }
  return kubeconfigTextAccess(text, path, dirname(path));
}

/** The same from a kubeconfig's text (e.g. the admin kubeconfig in kubemix's secret store); `where` names it. */
export function kubeconfigTextAccess(text: string, where: string, base: string): KubeAccess {
  const path = where;
  const fail = (message: string, hint?: string): never => {
    throw new KubeError('kube.kubeconfig', `${path}: ${message}`, hint === undefined ? {} : { hint });
  };
  let doc: Kubeconfig;
  try {
    doc = (parse(text) ?? {}) as Kubeconfig;
  } catch {
    return fail('cannot read it (not YAML)');
  }
  if (typeof doc !== 'object' || Array.isArray(doc)) return fail('not a kubeconfig mapping');
  const current = doc['current-context'];
  const context = doc.contexts?.find((c) => c.name === current)?.context ?? fail(`no context ${String(current)}`);
  const cluster =
    doc.clusters?.find((c) => c.name === context.cluster)?.cluster ??
    fail(`context ${String(current)}: no cluster ${String(context.cluster)}`);
  const user = doc.users?.find((u) => u.name === context.user)?.user ?? {};
  const file = (key: string, from: Record<string, unknown>): string | undefined => {
    const data = from[`${key}-data`];
    if (typeof data === 'string') return Buffer.from(data, 'base64').toString('utf8');
    const name = from[key];
    if (typeof name !== 'string') return undefined;
    try {
      return readFileSync(resolve(base, name), 'utf8');
    } catch (error) {
      return fail(`${key} ${name}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  };
  const server = cluster['server'];
  if (typeof server !== 'string' || !server.startsWith('https://')) fail('the cluster server must be an https:// URL');
  if (cluster['insecure-skip-tls-verify'] === true)
    fail('insecure-skip-tls-verify is not supported', 'give the cluster CA as certificate-authority(-data)');
  if (user['exec'] !== undefined || user['auth-provider'] !== undefined)
    fail(
      'exec and auth-provider credentials are not supported',
      'use a service-account token (token or tokenFile) or a client certificate',
    );
  const token = user['token'];
  const tokenFile = user['tokenFile'];
  const clientCert = file('client-certificate', user);
  const clientKey = file('client-key', user);
  if (
    typeof token !== 'string' &&
    typeof tokenFile !== 'string' &&
    (clientCert === undefined || clientKey === undefined)
  ) {
    fail(`user ${String(context.user)} has no token, tokenFile or client certificate and key`);
  }
  return {
    server: String(server).replace(/\/+$/, ''),
    ca: file('certificate-authority', cluster),
    token: () =>
      typeof token === 'string'
        ? token
        : typeof tokenFile === 'string'
          ? readFileSync(resolve(base, tokenFile), 'utf8').trim()
          : undefined,
    ...(clientCert === undefined || clientKey === undefined ? {} : { clientCert, clientKey }),
    origin: `kubeconfig ${path}`,
  };
}
