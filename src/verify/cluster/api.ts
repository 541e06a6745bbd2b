// The Kubernetes calls layer 2 and the demo share: the client's APIs for an
// access, namespace removal that waits until it is gone, abortable sleeps,
// and a plain HTTP GET from the deployer (NodePorts).
import { request } from 'node:http';
import type { KubeAccess } from '../../kube/config.js';
import { kubeConfigOf, loadKubeClient, statusOf } from '../../kube/client.js';

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
  };
}

/** Deletes a namespace kubemix made and waits until it is gone (a leftover of a crashed run included). */
export async function removeNamespace(
  a: Apis,
  name: string,
  wait: boolean,
  signal: AbortSignal,
  pollMs: number,
): Promise<void> {
  try {
    await a.core.deleteNamespace({ name: name, propagationPolicy: 'Background' });
  } catch (error) {
    if (statusOf(error) === 404) return;
    throw error;
  }
  const until = Date.now() + 120_000;
  while (wait && Date.now() < until) {
    try {
      await a.core.readNamespace({ name: name });
    } catch (error) {
      if (statusOf(error) === 404) return;
      throw error;
    }
    await sleep(pollMs, signal);
  }
}

export function httpGet(url: string, timeoutMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: timeoutMs }, (res) => {
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
