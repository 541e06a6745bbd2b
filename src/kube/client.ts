// kubemix's one Kubernetes client: @kubernetes/client-node, loaded on first
// use (a dynamic import: it pulls in node-fetch, ws, openid-client, … and
// commands that never talk to a cluster must not pay for that at start-up).
// Configured from a KubeAccess (config.ts), which has already refused what
// kubemix does not support (exec plugins, skip-verify, plain HTTP).
import type * as k8s from '@kubernetes/client-node';
import type { KubeAccess } from './config.js';
import { KubeError } from './errors.js';

export type KubeClientModule = typeof k8s;

let loaded: Promise<KubeClientModule> | undefined;

export function loadKubeClient(): Promise<KubeClientModule> {
  loaded ??= import('@kubernetes/client-node');
  return loaded;
}

/**
 * A KubeConfig for the access as it is now. Built per use because a
 * projected service-account token file is rotated by the kubelet.
 */
export function kubeConfigOf(client: KubeClientModule, access: KubeAccess): k8s.KubeConfig {
  const kc = new client.KubeConfig();
  const b64 = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : Buffer.from(text).toString('base64');
  const token = access.token();
  kc.loadFromOptions({
    clusters: [{ name: 'kubemix', server: access.server, caData: b64(access.ca), skipTLSVerify: false }],
    users: [
      {
        name: 'kubemix',
        ...(token === undefined ? {} : { token }),
        ...(access.clientCert === undefined
          ? {}
          : { certData: b64(access.clientCert), keyData: b64(access.clientKey) }),
      },
    ],
    contexts: [{ name: 'kubemix', cluster: 'kubemix', user: 'kubemix' }],
    currentContext: 'kubemix',
  });
  return kc;
}

/** The HTTP status of a client-node ApiException, or undefined for a transport failure. */
export function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/** A client-node failure as a KubeError: status and reason, never the request's credentials. */
export function kubeErrorOf(error: unknown, what: string, server: string): KubeError {
  if (error instanceof KubeError) return error;
  const status = statusOf(error);
  if (status === 401)
    return new KubeError('kube.unauthorized', `${server} refused the credentials (HTTP 401) for ${what}`, { status });
  if (status !== undefined) {
    const body = (error as { body?: unknown }).body;
    let reason = '';
    try {
      const doc = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown } | undefined;
      if (typeof doc?.message === 'string') reason = `: ${doc.message}`;
    } catch {
      // not a Status object: the HTTP status says enough
    }
    const attempts = (error as { attempts?: unknown }).attempts;
    const tries = typeof attempts === 'number' ? ` (still refused after ${attempts} tries)` : '';
    return new KubeError('kube.status', `${what}: HTTP ${status}${reason}${tries}`, { status });
  }
  const e = error as NodeJS.ErrnoException;
  const code = e.code ?? (e.cause as NodeJS.ErrnoException | undefined)?.code;
  return new KubeError('kube.unreachable', `${new URL(server).host}: ${what}: ${code ?? e.message}`, { cause: error });
}

/** `work` or a KubeError when it does not settle in `ms` (client-node takes no AbortSignal). */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string, server: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new KubeError('kube.unreachable', `${new URL(server).host}: ${what}: no answer in time`)),
      ms,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
