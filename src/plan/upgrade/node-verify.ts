// The node's part of `kubemix verify`, run after its upgrade (Ready) and
// before it is uncordoned: the layer-1 (underlay) cells that involve the
// node, chosen by verify's own probe planner (planUnderlay, installed) with
// a selection that keeps only cells whose source or target is the node.
// Each cell runs on its source host, so the node's chain gets one task per
// source: the node itself (to every peer, the API endpoint, the kubelets and
// the cluster's names) and each peer towards it (ICMP, MTU, its kubelet).
// Clock cells are left out: they compare with the deployer's clock, which a
// task on a node cannot read. Pure.
//
// Seam: verify's API layer (pods, Services, cross-OS cells) is built apart
// from this; when it lands, its cells for the node join `nodeCells` here.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { planUnderlay, underlayInput, type Probe } from '../../verify/underlay/plan.js';
import { MARK } from '../../verify/underlay/scripts.js';
import { powershell, sh, task } from '../task.js';
import { linuxScript, windowsScript, type UnderlayCheck } from '../tasks/underlay-validation.js';
import type { Stage, Task } from '../types.js';

/**
 * The underlay cells that involve `node`, clock and credential cells excepted, and none
 * with a peer in `skip` (nodes that may be rebooting at the same time).
 */
export function nodeCells(model: ClusterModel, node: PlanNode, skip: ReadonlySet<string> = new Set()): Probe[] {
  const involves = (id: string): boolean => {
    const [, , source = '', target = ''] = id.split('/');
    const peer = source === node.name ? target : source;
    return (source === node.name || target === node.name) && !skip.has(peer);
  };
  return planUnderlay(underlayInput(model, true), involves).probes.filter(
    (p) => p.expect.kind !== 'clock' && p.expect.kind !== 'credentials',
  );
}

function check(p: Probe): UnderlayCheck {
  const cmd = { script: p.script, command: p.command };
  const e = p.expect;
  const ok = e.kind === 'dns' ? `${MARK} addresses ${e.addresses.join(' ')}` : `${MARK} ok`;
  const failure =
    e.kind === 'dns'
      ? `does not resolve to ${e.addresses.join(' ')}`
      : e.kind === 'tcp'
        ? `nothing answers on TCP ${e.port}`
        : e.kind === 'mtu'
          ? `don't-fragment packets of ${e.mtu} bytes do not pass`
          : 'no answer';
  return { what: p.id, linux: cmd, windows: cmd, ok, failure };
}

/** One task per source host of the node's cells, in source order (the node first). */
export function nodeVerifyTasks(
  model: ClusterModel,
  node: PlanNode,
  stage: Stage,
  prefix: string,
  skip: ReadonlySet<string> = new Set(),
): Task[] {
  const cells = nodeCells(model, node, skip);
  const sources = [node, ...model.nodes.filter((n) => n !== node)].filter((s) =>
    cells.some((c) => c.source.name === s.name),
  );
  return sources.map((source) => {
    const mine = cells.filter((c) => c.source.name === source.name).map(check);
    const own = source === node;
    return task({
      stage,
      host: source.name,
      name: own ? `${prefix}-verify` : `${prefix}-verify-${node.name}`,
      description: own
        ? `verify ${node.name}'s underlay cells: ${mine.length} probes to its peers, the API and the cluster's names`
        : `verify ${source.name} → ${node.name}: ${mine.length} underlay probes`,
      check: null,
      apply: source.osFamily === 'windows' ? powershell(windowsScript(mine)) : sh(linuxScript(mine), 'user'),
      timeoutSeconds: 120,
    });
  });
}
