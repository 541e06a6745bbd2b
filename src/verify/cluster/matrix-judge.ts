// Judges the matrix from the pods as last seen: echo pods that never became
// Ready fail the pod cells into their node; each probe pod's log gives its
// cells (a pod that did not finish, or whose log cannot be read, fails its
// cells saying so); a host pod the cluster refused skips its cells with the
// reason.
import { kubeErrorOf } from '../../kube/client.js';
import type { CheckResult } from '../types.js';
import { retried, type Apis } from './api.js';
import type { ClusterExpectations, ExpectedNode } from './expect.js';
import { judgeCells } from './judge.js';
import { nameOf, podReady, podState, type PodObject } from './objects.js';
import type { RunClusterOptions } from './options.js';
import * as p from './probes.js';

/** A probe pod of a source node: its cells, whether it runs in the host's network, why the cluster refused it. */
export interface ProbePod {
  readonly node: ExpectedNode;
  readonly pod: string;
  readonly cells: readonly p.Cell[];
  readonly host: boolean;
  readonly refused?: string;
}

function echoFailures(nodes: readonly ExpectedNode[], echoes: readonly PodObject[], o: RunClusterOptions) {
  const out: CheckResult[] = [];
  for (const n of nodes) {
    const echo = echoes.find((x) => nameOf(x) === p.echoName(n.name));
    if (echo !== undefined && podReady(echo)) continue;
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
  return out;
}

function troubleOf(pr: ProbePod, pod: PodObject | undefined): { detail: string; cause?: string } | undefined {
  if (pod === undefined) return { detail: 'the probe pod is gone' };
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return undefined;
  const n = pr.node;
  return {
    detail: `the probe pod did not finish in time (${podState(pod)})`,
    cause: pr.host
      ? `the ${n.os === 'windows' ? 'HostProcess' : 'hostNetwork'} pod on ${n.name} did not run: ${n.os === 'windows' ? 'HostProcess containers need containerd 1.7+ and the pod must run as a Windows user (NT AUTHORITY\\SYSTEM)' : `image ${n.probeImage}`}`
      : n.os === 'windows'
        ? `image ${n.probeImage} must match the node's Windows build`
        : `image ${n.probeImage} could not be pulled or started`,
  };
}

/** The nodes CoreDNS (k8s-app=kube-dns) runs on, to explain DNS cells; none when the list cannot be had. */
async function dnsNodesOf(a: Apis, o: RunClusterOptions): Promise<string[]> {
  try {
    const list = await retried(o.signal, () =>
      a.core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' }),
    );
    const nodes = list.items.map((pod) => pod.spec?.nodeName).filter((n): n is string => n !== undefined);
    return [...new Set(nodes)].sort();
  } catch {
    return [];
  }
}

export async function judgeProbePods(
  a: Apis,
  e: ClusterExpectations,
  nodes: readonly ExpectedNode[],
  echoes: readonly PodObject[],
  clients: readonly PodObject[],
  probes: readonly ProbePod[],
  o: RunClusterOptions,
): Promise<CheckResult[]> {
  const osOf = (node: string): 'linux' | 'windows' | undefined => e.nodes.find((n) => n.name === node)?.os;
  const out = echoFailures(nodes, echoes, o);
  const dnsNodes = await dnsNodesOf(a, o);
  const judged = await Promise.all(
    probes.map(async (pr): Promise<CheckResult[]> => {
      if (pr.refused !== undefined)
        return pr.cells.map((c) => ({
          id: c.id,
          layer: 'cluster',
          probe: c.probe,
          source: c.source,
          target: c.target,
          status: 'skip',
          detail: pr.refused ?? '',
        }));
      let trouble = troubleOf(
        pr,
        clients.find((x) => nameOf(x) === pr.pod),
      );
      let log: string | undefined;
      if (trouble === undefined)
        try {
          const name = pr.pod;
          log = await retried(o.signal, () => a.core.readNamespacedPodLog({ name, namespace: p.PROBE_NAMESPACE }));
        } catch (error) {
          trouble = {
            detail: `its log could not be read (${kubeErrorOf(error, 'read log', o.access.server).message})`,
          };
        }
      const podTrouble = new Map(trouble === undefined ? [] : [[pr.node.name, trouble]]);
      return judgeCells(pr.cells, log, { nodes: e.nodes, underlay: o.underlay, podTrouble, osOf, dnsNodes });
    }),
  );
  return [...out, ...judged.flat()];
}
