// Layer 2's I/O: reads nodes, system pods and RuntimeClasses through the
// Kubernetes API, then runs the connectivity matrix (matrix.ts) with probe
// pods in a namespace of its own, which is always deleted (also on Ctrl-C,
// and a leftover from a crashed run is deleted before starting).
import { kubeErrorOf, statusOf } from '../../kube/client.js';
import { KubeError } from '../../kube/errors.js';
import { Aborted, apis, retried, type Apis } from './api.js';
import type { CheckResult } from '../types.js';
import type { ClusterExpectations } from './expect.js';
import { runMatrix } from './matrix.js';
import { judgeNodes, judgeSystem, type ClusterSnapshot } from './nodes.js';
import type { NodeObject, PodObject } from './objects.js';
import type { RunClusterOptions } from './options.js';
import { PROBE_NAMESPACE } from './probes.js';

export type { RunClusterOptions } from './options.js';

async function call<T>(what: string, o: RunClusterOptions, work: () => Promise<T>): Promise<T> {
  try {
    return await retried(o.signal, work);
  } catch (error) {
    throw kubeErrorOf(error, what, o.access.server);
  }
}

async function snapshot(a: Apis, e: ClusterExpectations, o: RunClusterOptions): Promise<ClusterSnapshot> {
  const namespaces = [...new Set(['kube-system', ...e.daemonSets.map((d) => d.namespace)])];
  const [version, nodes, rcs, ...pods] = await Promise.all([
    call('GET /version', o, () => a.version.getCode()),
    call('list nodes', o, () => a.core.listNode()),
    call('list runtimeclasses', o, () => a.node.listRuntimeClass()),
    ...namespaces.map((namespace) =>
      call(`list pods in ${namespace}`, o, () => a.core.listNamespacedPod({ namespace })).catch((error) => {
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

/** A probe namespace that cannot be had (an earlier run's stuck Terminating, another run's): a failed check. */
function namespaceCell(error: KubeError): CheckResult {
  return {
    id: `cluster/namespace/deployer/${PROBE_NAMESPACE}`,
    layer: 'cluster',
    probe: 'namespace',
    source: 'deployer',
    target: PROBE_NAMESPACE,
    status: 'fail',
    detail: error.message,
    ...(error.hint === undefined ? {} : { cause: error.hint }),
  };
}

/** Node, system-pod and RuntimeClass cells, then the connectivity matrix. */
export async function runCluster(e: ClusterExpectations, o: RunClusterOptions): Promise<CheckResult[]> {
  const a = await apis(o.access);
  const snap = await snapshot(a, e, o);
  const results = [...judgeNodes(e, snap), ...judgeSystem(e, snap)];
  const ready = new Set(
    results.filter((r) => r.probe === 'node' && r.target === 'ready' && r.status === 'pass').map((r) => r.source),
  );
  const nodes = e.nodes.filter((n) => ready.has(n.name));
  try {
    results.push(...(await runMatrix(a, e, nodes, snap.nodes, o)));
  } catch (error) {
    if (error instanceof Aborted) return results;
    if (error instanceof KubeError && /^kube\.namespace-/.test(error.code)) results.push(namespaceCell(error));
    else throw kubeErrorOf(error, 'the connectivity matrix', o.access.server);
  }
  for (const n of e.nodes.filter((x) => !ready.has(x.name)))
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
