// The plan `kubemix patch` runs on Windows workers, one at a time (or
// --max-unavailable at a time): cordon, drain, install the pending Windows
// updates and reboot when they ask for it (the executor waits through the
// reboot: Task.reboots), wait Ready, check the pod network came back,
// uncordon. A node that does not come back healthy fails its task, so the
// roll stops there and the node stays cordoned. Only the nodes the patch
// query (query.ts) found something to do on are in the roll. Pure.
import { InputError } from '../../errors.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { installUpdates, podNetworkBack, type UpdateSelection } from '../../render/windows/updates.js';
import { assemblePlan, type AssembledPlan } from '../assemble.js';
import { powershell, sh, task } from '../task.js';
import type { Task } from '../types.js';
import { cordonScripts, drainScripts, readyScripts, uncordonScripts } from '../upgrade/api-steps.js';
import { DRAIN_TIMEOUT_SECONDS, READY_TIMEOUT_SECONDS, UPGRADE_STAGE } from '../upgrade/assemble.js';

export interface PatchOptions extends UpdateSelection {
  /** Windows workers to patch; undefined: all of them. */
  readonly nodes?: readonly string[] | undefined;
  readonly maxUnavailable: number;
  /**
   * The nodes the patch query found something to do on (or that an
   * interrupted roll had started); undefined: every selected node. A node
   * outside it gets no task at all: it is never cordoned, drained or rebooted.
   */
  readonly roll?: ReadonlySet<string> | undefined;
}

/** Update search, download, install and the reboot: at most this long per node. */
export const UPDATE_TIMEOUT_SECONDS = 7200;

export function patchedNodes(model: ClusterModel, names: readonly string[] | undefined): PlanNode[] {
  const windows = model.nodes.filter((n) => n.osFamily === 'windows');
  if (names === undefined) return windows;
  const bad = names.filter((n) => !windows.some((w) => w.name === n));
  if (bad.length > 0)
    throw new InputError('flags.nodes', `--nodes: ${bad.join(', ')} is not a Windows worker`, {
      path: '--nodes',
      hint: `Windows workers: ${windows.map((w) => w.name).join(', ') || 'none'}`,
    });
  return windows.filter((w) => names.includes(w.name));
}

export function assemblePatchPlan(model: ClusterModel, options: PatchOptions): AssembledPlan {
  return assemblePlan(model, [(m) => ({ tasks: patchTasks(m, options) })]);
}

function patchTasks(model: ClusterModel, options: PatchOptions): Task[] {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  if (api === undefined) return [];
  const width = Math.max(1, options.maxUnavailable);
  const ends: string[] = [];
  const nodes = patchedNodes(model, options.nodes).filter((n) => options.roll?.has(n.name) ?? true);
  return nodes.flatMap((node, i) => {
    const chain = nodeChain(model, api, node, options, i < width ? [] : [ends[i - width] ?? '']);
    ends.push(chain.at(-1)?.id ?? '');
    return chain;
  });
}

function nodeChain(
  model: ClusterModel,
  api: PlanNode,
  node: PlanNode,
  selection: UpdateSelection,
  after: string[],
): Task[] {
  const onApi = (name: string, description: string, s: { check: string; apply: string }, timeoutSeconds: number) =>
    task({
      stage: UPGRADE_STAGE,
      host: api.name,
      name: `patch-${name}-${node.name}`,
      description,
      check: sh(s.check),
      apply: sh(s.apply),
      timeoutSeconds,
    });
  // No version to compare: a drained node's cordon and drain are redone on a re-run, which is harmless.
  const never = 'false';
  const updates = installUpdates(selection);
  const network = podNetworkBack(model);
  const ordered: Task[] = [
    onApi('cordon', `cordon ${node.name}`, cordonScripts(node.name, never), 60),
    onApi(
      'drain',
      `drain ${node.name} (PodDisruptionBudgets hold)`,
      drainScripts(node.name, never, DRAIN_TIMEOUT_SECONDS),
      DRAIN_TIMEOUT_SECONDS + 60,
    ),
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name: 'win-updates',
      description: `install pending Windows updates${selection.securityOnly ? ' (security only)' : ''}${selection.kbs.length > 0 ? ` (${selection.kbs.join(', ')})` : ''}, reboot when asked`,
      check: powershell(updates.check ?? ''),
      apply: powershell(updates.apply),
      reboots: true,
      timeoutSeconds: UPDATE_TIMEOUT_SECONDS,
    }),
    onApi(
      'ready',
      `wait until ${node.name} is Ready`,
      readyScripts(node.name, undefined, READY_TIMEOUT_SECONDS),
      READY_TIMEOUT_SECONDS + 30,
    ),
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name: 'win-pod-network',
      description: 'flanneld running and its HNS network present; else name the updates and their wusa rollback',
      check: powershell(network.check ?? ''),
      apply: powershell(network.apply),
      timeoutSeconds: 360,
    }),
    onApi('uncordon', `uncordon ${node.name}`, uncordonScripts(node.name), 60),
  ];
  return ordered.map((t, i) => ({ ...t, after: i === 0 ? [...after].sort() : [ordered[i - 1]?.id ?? ''] }));
}
