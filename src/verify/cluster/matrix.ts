// The connectivity matrix's I/O: the probe namespace (an earlier run's
// leftover removed first, ours removed in a finally), echo pods and
// Services, one probe pod per source node (and, where the cluster allows
// them, a hostNetwork / HostProcess one), waits by list + watch, the
// NodePorts from the deployer, then the judgement of the probe pods' logs.
import { statusOf } from '../../kube/client.js';
import type { CheckResult } from '../types.js';
import { retried, type Apis } from './api.js';
import type { ClusterExpectations, ExpectedNode } from './expect.js';
import { judgeNodePort } from './judge.js';
import { judgeProbePods, type ProbePod } from './matrix-judge.js';
import { createNamespace, removeNamespace, type NamespaceWait } from './namespace.js';
import { nameOf, podReady, type NodeObject, type PodObject } from './objects.js';
import * as p from './probes.js';
import type { RunClusterOptions } from './options.js';
import { waitFor, type Listed } from './watch.js';
import { probeNodePort } from './nodeport.js';

const finished = (x: PodObject): boolean => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed';

function podsOf(a: Apis, role: string) {
  const labelSelector = `${p.PROBE_LABEL}=${role}`;
  const namespace = p.PROBE_NAMESPACE;
  return {
    path: `/api/v1/namespaces/${namespace}/pods`,
    query: { labelSelector },
    list: async () => (await a.core.listNamespacedPod({ namespace, labelSelector })) as Listed<PodObject>,
  };
}

/** Why the cluster refuses host pods in our namespace, when its Pod Security level says so before we try. */
function hostRefusal(labels: Readonly<Record<string, string>> | undefined): string | undefined {
  const level = labels?.[p.PSA_ENFORCE];
  return level === undefined || level === 'privileged'
    ? undefined
    : `the namespace ${p.PROBE_NAMESPACE} is enforced at Pod Security level ${level}: hostNetwork and HostProcess pods need privileged`;
}

/** Creates a probe pod; a host pod the API refuses (403: Pod Security, a policy) is reported, not thrown. */
async function createProbePod(a: Apis, pod: ProbePod, o: RunClusterOptions): Promise<ProbePod> {
  try {
    const body = p.clientPod(pod.node, pod.cells, pod.host) as never;
    await retried(o.signal, () => a.core.createNamespacedPod({ namespace: p.PROBE_NAMESPACE, body }));
    return pod;
  } catch (error) {
    if (!pod.host || statusOf(error) !== 403) throw error;
    const body = (error as { body?: unknown }).body;
    const doc = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    return { ...pod, refused: `the API server refused the pod: ${doc?.message ?? 'HTTP 403'}` };
  }
}

export async function runMatrix(
  a: Apis,
  e: ClusterExpectations,
  nodes: readonly ExpectedNode[],
  snapNodes: readonly NodeObject[],
  o: RunClusterOptions,
): Promise<CheckResult[]> {
  if (nodes.length === 0) return [];
  const say = o.onProgress ?? (() => undefined);
  const ns = p.PROBE_NAMESPACE;
  const pollMs = o.pollMs ?? 1000;
  const w: NamespaceWait = { signal: o.signal, pollMs, ...(o.goneMs === undefined ? {} : { goneMs: o.goneMs }) };
  const wantHost = nodes.some((s) => nodes.some((t) => o.select(`cluster/host-pod/${s.name}/${t.name}`)));
  await removeNamespace(a, ns, true, w);
  // Only a namespace this run created is deleted at the end: not another run's (namespace-busy).
  let ours = false;
  try {
    say(`creating namespace ${ns}, echo pods and Services`);
    const created = await createNamespace(a, ns, p.namespaceManifest(wantHost), w);
    ours = true;
    for (const n of nodes) {
      const body = p.echoPod(n) as never;
      await retried(o.signal, () => a.core.createNamespacedPod({ namespace: ns, body }));
    }
    const svcs = [];
    for (const s of p.services([...new Set(nodes.map((n) => n.os))]))
      svcs.push(await retried(o.signal, () => a.core.createNamespacedService({ namespace: ns, body: s as never })));
    const startMs = o.startMs ?? e.podStartMs;
    const echoReady = (ps: PodObject[]): boolean =>
      nodes.every((n) => ps.some((x) => nameOf(x) === p.echoName(n.name) && podReady(x)));
    const echoes = await waitFor(a, podsOf(a, 'echo'), echoReady, { ms: startMs, signal: o.signal, pollMs });
    const endpoints = nodes.flatMap((n) => {
      const pod = echoes.find((x) => nameOf(x) === p.echoName(n.name));
      return pod !== undefined && podReady(pod) && pod.status?.podIP !== undefined
        ? [{ node: n, ip: pod.status.podIP }]
        : [];
    });
    const clusterIps = Object.fromEntries(svcs.map((s) => [s.metadata?.name ?? '', s.spec?.clusterIP ?? '']));
    const refusedHost = wantHost ? hostRefusal(created.metadata?.labels) : undefined;
    const wanted: ProbePod[] = nodes.flatMap((n) => {
      const cells = p.cellsOf(n, endpoints, clusterIps, e.clusterDomain, o.egress ?? []).filter((c) => o.select(c.id));
      const hostCells = p.hostCellsOf(n, endpoints).filter((c) => o.select(c.id));
      return [
        { node: n, pod: p.clientName(n.name), cells, host: false },
        {
          node: n,
          pod: p.hostClientName(n.name),
          cells: hostCells,
          host: true,
          ...(refusedHost === undefined ? {} : { refused: refusedHost }),
        },
      ].filter((x) => x.cells.length > 0);
    });
    say('starting the probe pods');
    const probes: ProbePod[] = [];
    for (const pod of wanted) probes.push(pod.refused === undefined ? await createProbePod(a, pod, o) : pod);
    const running = probes.filter((x) => x.refused === undefined);
    const allDone = (ps: PodObject[]): boolean =>
      running.every((r) => ps.some((x) => nameOf(x) === r.pod && finished(x)));
    const matrixMs = o.matrixMs ?? (p.CELL_DEADLINE_S + p.CELL_HOLD + 30) * 1000;
    const [clients, nodePorts] = await Promise.all([
      waitFor(a, podsOf(a, 'client'), allDone, { ms: startMs + matrixMs, signal: o.signal, pollMs }),
      // Every ready echo pod backs svc-nodeport: each must answer through the node.
      nodePortCells(
        nodes,
        endpoints.map((x) => p.echoName(x.node.name)),
        snapNodes,
        svcs,
        o,
      ),
    ]);
    return [...(await judgeProbePods(a, e, nodes, echoes, clients, probes, o)), ...nodePorts];
  } finally {
    if (ours) {
      say(`deleting namespace ${ns}`);
      await removeNamespace(a, ns, false, { signal: new AbortController().signal, pollMs: 0 }).catch(() => undefined);
    }
  }
}

function internalIp(n: NodeObject | undefined): string | undefined {
  return n?.status?.addresses?.find((x) => x.type === 'InternalIP')?.address;
}

/** NodePort from the deployer through the first Linux and the first Windows node (workers before control planes). */
function nodePortCells(
  nodes: readonly ExpectedNode[],
  backends: readonly string[],
  snapNodes: readonly NodeObject[],
  svcs: readonly { metadata?: { name?: string }; spec?: { ports?: { nodePort?: number }[] } }[],
  o: RunClusterOptions,
): Promise<CheckResult[]> {
  const nodePort = svcs.find((s) => s.metadata?.name === p.SERVICES.nodeport)?.spec?.ports?.[0]?.nodePort;
  const through = ['linux', 'windows'].flatMap((os) =>
    nodes
      .filter((n) => n.os === os && !n.controlPlane)
      .concat(nodes.filter((n) => n.os === os))
      .slice(0, 1),
  );
  return Promise.all(
    through
      .filter((n) => o.select(`cluster/nodeport/deployer/${n.name}`))
      .map(async (n) => {
        const ip = internalIp(snapNodes.find((x) => nameOf(x) === n.name));
        const url = `http://${ip?.includes(':') ? `[${ip}]` : (ip ?? n.name)}:${nodePort ?? 0}/`;
        return judgeNodePort(n, url, await probeNodePort(url, o, backends), o.underlay);
      }),
  );
}
