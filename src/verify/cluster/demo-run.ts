// Runs `kubemix verify --demo`: creates the demo's objects, waits for the
// IIS and nginx pods, then GETs the front end through its NodePort on a
// Linux node from the deployer until IIS's page comes back through it. The
// namespace is deleted afterwards unless --keep (always on Ctrl-C).
import { InputError } from '../../errors.js';
import type { KubeAccess } from '../../kube/config.js';
import { kubeErrorOf } from '../../kube/client.js';
import { Aborted, apis, httpGet, sleep, type Apis } from './api.js';
import { removeNamespace } from './namespace.js';
import { DEMO_MARK, DEMO_NAMESPACE, DEMO_LABEL, demoManifests, type DemoManifest } from './demo.js';
import type { ClusterExpectations } from './expect.js';
import { nameOf, podReady, podState, type NodeObject, type PodObject } from './objects.js';

export interface DemoOptions {
  readonly access: KubeAccess;
  readonly signal: AbortSignal;
  readonly keep: boolean;
  readonly startMs?: number;
  readonly pollMs?: number;
  readonly onProgress?: (message: string) => void;
}

export interface DemoResult {
  readonly ok: boolean;
  readonly url: string;
  /** The page as it came back, or why nothing did. */
  readonly answer: string;
  readonly kept: boolean;
}

async function create(a: Apis, m: DemoManifest): Promise<void> {
  const body = m as never;
  const namespace = DEMO_NAMESPACE;
  if (m.kind === 'Namespace') await a.core.createNamespace({ body });
  else if (m.kind === 'ConfigMap') await a.core.createNamespacedConfigMap({ namespace, body });
  else if (m.kind === 'Deployment') await a.apps.createNamespacedDeployment({ namespace, body });
  else await a.core.createNamespacedService({ namespace, body });
}

function linuxNodeIp(nodes: readonly NodeObject[], e: ClusterExpectations): string | undefined {
  const ready = (n: NodeObject): boolean =>
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const linux = e.nodes.filter((n) => n.os === 'linux').sort((x, y) => Number(x.controlPlane) - Number(y.controlPlane));
  for (const l of linux) {
    const n = nodes.find((x) => nameOf(x) === l.name);
    const ip =
      n !== undefined && ready(n) ? n.status?.addresses?.find((x) => x.type === 'InternalIP')?.address : undefined;
    if (ip !== undefined) return ip;
  }
  return undefined;
}

export async function runDemo(e: ClusterExpectations, o: DemoOptions): Promise<DemoResult> {
  const manifests = demoManifests(e);
  if (manifests === undefined)
    throw new InputError('verify.demo', 'the demo needs a Windows node and a Linux node in the plan', {
      path: '--demo',
    });
  const a = await apis(o.access);
  const say = o.onProgress ?? (() => undefined);
  const pollMs = o.pollMs ?? 2000;
  let keep = o.keep;
  try {
    const ip = linuxNodeIp((await a.core.listNode()).items as NodeObject[], e);
    if (ip === undefined)
      return { ok: false, url: '', answer: 'no Ready Linux node to reach the NodePort through', kept: false };
    await removeNamespace(a, DEMO_NAMESPACE, true, { signal: o.signal, pollMs });
    say(`creating ${manifests.map((m) => `${m.kind} ${String((m.metadata as { name: string }).name)}`).join(', ')}`);
    for (const m of manifests) await create(a, m);
    const svc = await a.core.readNamespacedService({ name: 'web', namespace: DEMO_NAMESPACE });
    const url = `http://${ip.includes(':') ? `[${ip}]` : ip}:${svc.spec?.ports?.[0]?.nodePort ?? 0}/`;
    const until = Date.now() + (o.startMs ?? 900_000);
    let pods: PodObject[] = [];
    for (;;) {
      pods = (await a.core.listNamespacedPod({ namespace: DEMO_NAMESPACE })).items as PodObject[];
      const up = ['iis', 'web'].every((d) => pods.some((p) => p.metadata?.labels?.[DEMO_LABEL] === d && podReady(p)));
      if (up || Date.now() >= until) break;
      await sleep(pollMs, o.signal);
    }
    const waiting = pods.filter((p) => !podReady(p));
    say(`GET ${url}`);
    let r = await httpGet(url, 5000);
    while (!(r.ok && r.output.includes(DEMO_MARK)) && Date.now() < until) {
      await sleep(pollMs, o.signal);
      r = await httpGet(url, 5000);
    }
    const ok = r.ok && r.output.includes(DEMO_MARK);
    const why = waiting.map((p) => `${nameOf(p)} ${podState(p)}`).join('; ');
    return { ok, url, answer: ok || why === '' ? r.output : `${r.output} (not Ready: ${why})`, kept: keep };
  } catch (error) {
    keep = false;
    if (error instanceof Aborted) return { ok: false, url: '', answer: 'interrupted', kept: false };
    throw kubeErrorOf(error, 'the demo', o.access.server);
  } finally {
    if (!keep || o.signal.aborted)
      await removeNamespace(a, DEMO_NAMESPACE, false, { signal: new AbortController().signal, pollMs: 0 }).catch(
        () => undefined,
      );
  }
}
