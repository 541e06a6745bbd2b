// Layer 2's I/O: reads nodes, system pods and RuntimeClasses through the
// Kubernetes API, then runs the connectivity matrix with probe pods in a
// namespace of its own, which is always deleted (also on Ctrl-C, and a
// leftover from a crashed run is deleted before starting).
import type { KubeAccess } from '../../kube/config.js';
import { kubeErrorOf, statusOf } from '../../kube/client.js';
import { Aborted, apis, httpGet, removeNamespace, sleep, type Apis } from './api.js';
import type { CheckResult } from '../types.js';
import type { ClusterExpectations, ExpectedNode } from './expect.js';
import { judgeCells, judgeNodePort } from './judge.js';
import { judgeNodes, judgeSystem, type ClusterSnapshot } from './nodes.js';
import { nameOf, podReady, podState, type NodeObject, type PodObject } from './objects.js';
import * as p from './probes.js';

export interface RunClusterOptions {
  readonly access: KubeAccess;
  readonly signal: AbortSignal;
  readonly underlay: readonly CheckResult[];
  /** Which cells run (--only/--skip over check ids). */
  readonly select: (id: string) => boolean;
  /** How long probe pods may take to start, and the whole matrix to finish. */
  readonly startMs?: number;
  readonly matrixMs?: number;
  readonly pollMs?: number;
  readonly onProgress?: (message: string) => void;
}

async function call<T>(what: string, access: KubeAccess, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw kubeErrorOf(error, what, access.server);
  }
}

async function snapshot(a: Apis, e: ClusterExpectations, access: KubeAccess): Promise<ClusterSnapshot> {
  const namespaces = [...new Set(['kube-system', ...e.daemonSets.map((d) => d.namespace)])];
  const [version, nodes, rcs, ...pods] = await Promise.all([
    call('GET /version', access, () => a.version.getCode()),
    call('list nodes', access, () => a.core.listNode()),
    call('list runtimeclasses', access, () => a.node.listRuntimeClass()),
    ...namespaces.map((namespace) =>
      call(`list pods in ${namespace}`, access, () => a.core.listNamespacedPod({ namespace })).catch((error) => {
        // A CNI namespace that does not exist yet lists as nothing: the cells say what is missing.
        if (statusOf(error) === 404 || (error as { status?: number }).status === 404) return { items: [] };
        throw error;
      }),
    ),
  ]);
  return {
    serverVersion: version.gitVersion,
    nodes: nodes.items as NodeObject[],
    pods: pods.flatMap((l) => l.items as PodObject[]),
    runtimeClasses: rcs.items,
  };
}

/** Polls until `done` holds for the listed pods or the time is up; returns the last list. */
async function listProbePods(a: Apis, role: string): Promise<PodObject[]> {
  const l = await a.core.listNamespacedPod({ namespace: p.PROBE_NAMESPACE, labelSelector: `${p.PROBE_LABEL}=${role}` });
  return l.items as PodObject[];
}

/** Polls until `done` holds for the listed pods or the time is up; returns the last list. */
async function waitPods(
  a: Apis,
  role: string,
  done: (pods: PodObject[]) => boolean,
  ms: number,
  o: RunClusterOptions,
): Promise<PodObject[]> {
  const until = Date.now() + ms;
  for (;;) {
    const pods = await listProbePods(a, role);
    if (done(pods) || Date.now() >= until) return pods;
    await sleep(o.pollMs ?? 1000, o.signal);
  }
}

/** GET until it answers, then keep answering for the hold window (the same judgement as the pods'). */
async function probeNodePort(url: string, o: RunClusterOptions): Promise<{ ok: boolean; output: string }> {
  const until = Date.now() + (o.matrixMs ?? p.CELL_DEADLINE_S * 1000);
  let r = await httpGet(url, 3000);
  while (!r.ok && Date.now() < until && !o.signal.aborted) {
    await sleep(o.pollMs ?? 1000, o.signal);
    r = await httpGet(url, 3000);
  }
  for (let held = 0; r.ok && held < p.CELL_HOLD; held++) {
    await sleep(o.pollMs ?? 1000, o.signal);
    r = await httpGet(url, 3000);
  }
  return r;
}

function internalIp(n: NodeObject | undefined): string | undefined {
  return n?.status?.addresses?.find((x) => x.type === 'InternalIP')?.address;
}

/** Node, system-pod and RuntimeClass cells, then the connectivity matrix. */
export async function runCluster(e: ClusterExpectations, o: RunClusterOptions): Promise<CheckResult[]> {
  const a = await apis(o.access);
  const snap = await snapshot(a, e, o.access);
  const results = [...judgeNodes(e, snap), ...judgeSystem(e, snap)];
  const ready = new Set(
    results.filter((r) => r.probe === 'node' && r.target === 'ready' && r.status === 'pass').map((r) => r.source),
  );
  const nodes = e.nodes.filter((n) => ready.has(n.name));
  const skipped = e.nodes.filter((n) => !ready.has(n.name));
  try {
    results.push(...(await matrix(a, e, nodes, snap, o)));
  } catch (error) {
    if (error instanceof Aborted) return results;
    throw kubeErrorOf(error, 'the connectivity matrix', o.access.server);
  }
  for (const n of skipped)
    results.push({
      id: `cluster/pod-ip/${n.name}/*`,
      layer: 'cluster',
      probe: 'pod-ip',
      source: n.name,
      target: '*',
      status: 'skip',
      detail: `${n.name} is not Ready: no probe pods on it`,
    });
  return results.filter((r) => o.select(r.id));
}

async function matrix(
  a: Apis,
  e: ClusterExpectations,
  nodes: readonly ExpectedNode[],
  snap: ClusterSnapshot,
  o: RunClusterOptions,
): Promise<CheckResult[]> {
  if (nodes.length === 0) return [];
  const say = o.onProgress ?? (() => undefined);
  const ns = p.PROBE_NAMESPACE;
  await removeNamespace(a, p.PROBE_NAMESPACE, true, o.signal, o.pollMs ?? 1000);
  try {
    say(`creating namespace ${ns}, echo pods and Services`);
    await a.core.createNamespace({ body: p.namespaceManifest() as never });
    for (const n of nodes) await a.core.createNamespacedPod({ namespace: ns, body: p.echoPod(n) as never });
    const oses = [...new Set(nodes.map((n) => n.os))];
    const svcs = [];
    for (const s of p.services(oses))
      svcs.push(await a.core.createNamespacedService({ namespace: ns, body: s as never }));
    const startMs = o.startMs ?? 300_000;
    const echoes = await waitPods(a, 'echo', (ps) => ps.length === nodes.length && ps.every(podReady), startMs, o);
    const endpoints = nodes.flatMap((n) => {
      const pod = echoes.find((x) => nameOf(x) === p.echoName(n.name));
      return pod !== undefined && podReady(pod) && pod.status?.podIP !== undefined
        ? [{ node: n, ip: pod.status.podIP }]
        : [];
    });
    const clusterIps = Object.fromEntries(svcs.map((s) => [s.metadata?.name ?? '', s.spec?.clusterIP ?? '']));
    const cells = new Map(
      nodes.map((n) => [n.name, p.cellsOf(n, endpoints, clusterIps, e.clusterDomain).filter((c) => o.select(c.id))]),
    );
    say('starting the probe pods');
    for (const n of nodes)
      if ((cells.get(n.name) ?? []).length > 0)
        await a.core.createNamespacedPod({ namespace: ns, body: p.clientPod(n, cells.get(n.name) ?? []) as never });
    const nodePort = svcs.find((s) => s.metadata?.name === p.SERVICES.nodeport)?.spec?.ports?.[0]?.nodePort;
    const nodePortNodes = ['linux', 'windows'].flatMap((os) =>
      nodes
        .filter((n) => n.os === os && !n.controlPlane)
        .concat(nodes.filter((n) => n.os === os))
        .slice(0, 1),
    );
    const [clients, nodePorts] = await Promise.all([
      waitPods(
        a,
        'client',
        (ps) =>
          ps.length >= [...cells.values()].filter((c) => c.length > 0).length &&
          ps.every((x) => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed'),
        startMs + (o.matrixMs ?? (p.CELL_DEADLINE_S + p.CELL_HOLD + 30) * 1000),
        o,
      ),
      Promise.all(
        nodePortNodes
          .filter((n) => o.select(`cluster/nodeport/deployer/${n.name}`))
          .map(async (n) => {
            const ip = internalIp(snap.nodes.find((x) => nameOf(x) === n.name));
            const url = `http://${ip?.includes(':') ? `[${ip}]` : (ip ?? n.name)}:${nodePort ?? 0}/`;
            return judgeNodePort(n, url, await probeNodePort(url, o), o.underlay);
          }),
      ),
    ]);
    return [...(await judgeAll(a, e, nodes, echoes, clients, cells, o)), ...nodePorts];
  } finally {
    say(`deleting namespace ${ns}`);
    await removeNamespace(a, p.PROBE_NAMESPACE, false, new AbortController().signal, 0).catch(() => undefined);
  }
}

async function judgeAll(
  a: Apis,
  e: ClusterExpectations,
  nodes: readonly ExpectedNode[],
  echoes: readonly PodObject[],
  clients: readonly PodObject[],
  cells: ReadonlyMap<string, readonly p.Cell[]>,
  o: RunClusterOptions,
): Promise<CheckResult[]> {
  const trouble = new Map<string, { detail: string; cause?: string }>();
  const osOf = (node: string): 'linux' | 'windows' | undefined => e.nodes.find((n) => n.name === node)?.os;
  const out: CheckResult[] = [];
  for (const n of nodes) {
    const echo = echoes.find((x) => nameOf(x) === p.echoName(n.name));
    if (echo === undefined || !podReady(echo)) {
      const misplaced = echo?.spec?.nodeName !== undefined && echo.spec.nodeName !== n.name;
      for (const s of nodes) {
        const id = `cluster/pod-ip/${s.name}/${n.name}`;
        if (!o.select(id)) continue;
        out.push({
          id,
          layer: 'cluster',
          probe: 'pod-ip',
          source: s.name,
          target: n.name,
          status: 'fail',
          detail: `the echo pod on ${n.name} is not Ready (${echo === undefined ? 'missing' : podState(echo)})`,
          cause: misplaced
            ? `the pod was placed on ${echo.spec?.nodeName ?? '?'}: a ${n.os} pod on a node of the other OS`
            : n.os === 'windows'
              ? `the Windows probe image ${n.probeImage} must match the node's build (RuntimeClass ${n.runtimeClass ?? '?'}); image pull or HNS endpoint creation`
              : `image ${n.probeImage} not pulled, or the CNI on ${n.name} gave the pod no address`,
        });
      }
    }
    const client = clients.find((x) => nameOf(x) === p.clientName(n.name));
    if (client === undefined) trouble.set(n.name, { detail: 'the probe pod is gone' });
    else if (client.status?.phase !== 'Succeeded' && client.status?.phase !== 'Failed')
      trouble.set(n.name, {
        detail: `the probe pod did not finish in time (${podState(client)})`,
        cause:
          n.os === 'windows'
            ? `image ${n.probeImage} must match the node's Windows build`
            : `image ${n.probeImage} could not be pulled or started`,
      });
  }
  const logs = await Promise.all(
    nodes.map(async (n) => {
      if (trouble.has(n.name) || (cells.get(n.name) ?? []).length === 0) return undefined;
      try {
        return await a.core.readNamespacedPodLog({ name: p.clientName(n.name), namespace: p.PROBE_NAMESPACE });
      } catch (error) {
        trouble.set(n.name, {
          detail: `its log could not be read (${kubeErrorOf(error, 'read log', o.access.server).message})`,
        });
        return undefined;
      }
    }),
  );
  nodes.forEach((n, i) =>
    out.push(
      ...judgeCells(cells.get(n.name) ?? [], logs[i], {
        nodes: e.nodes,
        underlay: o.underlay,
        podTrouble: trouble,
        osOf,
      }),
    ),
  );
  return out;
}
