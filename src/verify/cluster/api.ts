// The Kubernetes calls layer 2 and the demo share: the client's APIs for an
// access (and its watch), calls retried when the server says 429, abortable
// sleeps, and a plain HTTP GET from the deployer (NodePorts).
import { request } from 'node:http';
import type { KubeAccess } from '../../kube/config.js';
import { kubeConfigOf, loadKubeClient } from '../../kube/client.js';
import { withApiRetries } from '../../kube/retry.js';

export class Aborted extends Error {}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Aborted());
    const t = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(t);
      reject(new Aborted());
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

export type Apis = Awaited<ReturnType<typeof apis>>;

export async function apis(access: KubeAccess) {
  const client = await loadKubeClient();
  const kc = kubeConfigOf(client, access);
  return {
    core: kc.makeApiClient(client.CoreV1Api),
    apps: kc.makeApiClient(client.AppsV1Api),
    node: kc.makeApiClient(client.NodeV1Api),
    version: kc.makeApiClient(client.VersionApi),
    watch: new client.Watch(kc),
  };
}

/** An API call, tried again (bounded) while the server answers 429 TooManyRequests with Retry-After. */
export function retried<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  return withApiRetries(work, (ms) => sleep(ms, signal));
}

export function httpGet(url: string, timeoutMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    // A new connection per request (no keep-alive): through a Service each
    // connection is balanced once, and every backend must get its turn.
    const req = request(url, { timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body = (body + c).slice(0, 300)));
      res.on('end', () => resolve({ ok: res.statusCode === 200, output: body.trim() }));
      res.on('error', (e) => resolve({ ok: false, output: e.message }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ ok: false, output: e.code ?? e.message }));
    req.end();
  });
}
