// The plan `kubemix patch` runs on Windows workers, one at a time (or
// --max-unavailable at a time): stage the updates (search, EULAs, download,
// as SYSTEM on the node: nothing is cordoned yet, so a node whose Windows
// Update cannot run is left alone), cordon, drain, reboot first if Windows
// already waits for one, install what was staged and reboot when it asks
// (the executor waits through each reboot: Task.reboots), wait Ready, check
// the pod network came back, run the node's underlay cells of verify (the
// upgrade's node-verify.ts), uncordon. A node that does not come back
// healthy fails its task, so the roll stops there and the node stays
// cordoned; one where nothing was installed is uncordoned by src/patch/run.ts.
// Only the nodes the patch query (query.ts) found something to do on are in
// the roll. Pure.
import { InputError } from '../../errors.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import {
  installUpdates,
  podNetworkBack,
  rebootIfPending,
  stageUpdates,
  SYSTEM_TASK_SECONDS,
  type UpdateSelection,
} from '../../render/windows/updates.js';
import { installLinuxUpdates } from '../../render/linux/updates.js';
import { CALICO_WINDOWS, linuxDistro } from '../../matrix/index.js';
import { assemblePlan, type AssembledPlan } from '../assemble.js';
import { powershell, sh, task } from '../task.js';
import type { Task } from '../types.js';
import {
  cordonScripts,
  drainScripts,
  readyScripts,
  uncordonScripts,
  type CheckAndApply,
} from '../upgrade/api-steps.js';
import { shell, shellCode } from '../../util/escape/index.js';
import { DRAIN_TIMEOUT_SECONDS, onlyDnsHome, READY_TIMEOUT_SECONDS, UPGRADE_STAGE } from '../upgrade/assemble.js';
import { nodeVerifyTasks } from '../upgrade/node-verify.js';

export interface PatchOptions extends UpdateSelection {
  /** Nodes to patch; undefined: every Windows worker (and with `linux`, every Linux node). */
  readonly nodes?: readonly string[] | undefined;
  readonly maxUnavailable: number;
  /** `--linux`: Linux nodes too (control planes one at a time first), with the distro's package manager. */
  readonly linux?: boolean;
  /**
   * The nodes the patch query found something to do on (or that an
   * interrupted roll had started); undefined: every selected node. A node
   * outside it gets no task at all: it is never cordoned, drained or rebooted.
   */
  readonly roll?: ReadonlySet<string> | undefined;
}

/** Update search, download, install and the reboot: at most this long per node. */
export const UPDATE_TIMEOUT_SECONDS = 7200;

/** The nodes `patch` may touch, in roll order: control planes (with --linux), Linux workers, Windows workers. */
function patchable(model: ClusterModel, linux: boolean): PlanNode[] {
  const of = (role: string, os: string) => model.nodes.filter((n) => n.role === role && n.osFamily === os);
  return linux
    ? [...of('control-plane', 'linux'), ...of('worker', 'linux'), ...of('worker', 'windows')]
    : of('worker', 'windows');
}

export function patchedNodes(model: ClusterModel, names: readonly string[] | undefined, linux = false): PlanNode[] {
  const all = patchable(model, linux);
  if (names === undefined) return all;
  const kind = linux ? 'cluster node' : 'Windows worker (add --linux for Linux nodes)';
  const bad = names.filter((n) => !all.some((w) => w.name === n));
  if (bad.length > 0)
    throw new InputError('flags.nodes', `--nodes: ${bad.join(', ')} is not a ${kind}`, {
      path: '--nodes',
      hint: `nodes patch can take: ${all.map((w) => w.name).join(', ') || 'none'}`,
    });
  return all.filter((w) => names.includes(w.name));
}

export function assemblePatchPlan(model: ClusterModel, options: PatchOptions): AssembledPlan {
  return assemblePlan(model, [(m) => ({ tasks: patchTasks(m, options) })]);
}

/** Control planes one at a time, then the workers --max-unavailable at a time; each chain waits for its turn. */
function patchTasks(model: ClusterModel, options: PatchOptions): Task[] {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  if (api === undefined) return [];
  const nodes = patchedNodes(model, options.nodes, options.linux === true).filter(
    (n) => options.roll?.has(n.name) ?? true,
  );
  const cps = nodes.filter((n) => n.role === 'control-plane');
  const workers = nodes.filter((n) => n.role !== 'control-plane');
  const tasks: Task[] = [];
  let barrier: string[] = [];
  for (const cp of cps) {
    const chain = nodeChain(model, api, cp, options, barrier, new Set());
    tasks.push(...chain);
    barrier = [chain.at(-1)?.id ?? ''];
  }
  const width = Math.max(1, options.maxUnavailable);
  // Several workers at once: another one may be rebooting while this one is verified, so the
  // cells between two rolled workers are left out (each still checks the control planes and the rest).
  const rolling = new Set(width > 1 ? workers.map((w) => w.name) : []);
  const ends: string[] = [];
  workers.forEach((node, i) => {
    const chain = nodeChain(model, api, node, options, i < width ? barrier : [ends[i - width] ?? ''], rolling);
    ends.push(chain.at(-1)?.id ?? '');
    tasks.push(...chain);
  });
  return tasks;
}

function nodeChain(
  model: ClusterModel,
  api: PlanNode,
  node: PlanNode,
  selection: UpdateSelection,
  after: string[],
  rolling: ReadonlySet<string>,
): Task[] {
  const onApi = (name: string, description: string, s: CheckAndApply, timeoutSeconds: number) =>
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
  const never = shellCode('false');
  const windows = node.osFamily === 'windows';
  const ordered: Task[] = [
    ...(windows ? [stageWindowsUpdates(selection, node)] : []),
    onApi('cordon', `cordon ${node.name}`, cordonScripts(node.name, never), 60),
    onApi(
      'drain',
      `drain ${node.name} (PodDisruptionBudgets hold)`,
      drainScripts(node.name, never, DRAIN_TIMEOUT_SECONDS, onlyDnsHome(model, node)),
      DRAIN_TIMEOUT_SECONDS + 60,
    ),
    ...(windows ? windowsUpdates(selection, node) : [linuxUpdates(selection, node)]),
    onApi(
      'ready',
      `wait until ${node.name} is Ready`,
      node.role === 'control-plane'
        ? afterApiBack(readyScripts(node.name, undefined, READY_TIMEOUT_SECONDS))
        : readyScripts(node.name, undefined, READY_TIMEOUT_SECONDS),
      READY_TIMEOUT_SECONDS + (node.role === 'control-plane' ? 330 : 30),
    ),
    ...(node.osFamily === 'windows' ? [windowsNetwork(model, node)] : []),
  ];
  const chain = ordered.map((t, i) => ({ ...t, after: i === 0 ? [...after].sort() : [ordered[i - 1]?.id ?? ''] }));
  // The node's part of verify, from every source host at once once it is back; uncordon only when all of it passed.
  const back = chain.at(-1)?.id ?? '';
  const skip = new Set([...rolling].filter((n) => n !== node.name));
  const verify = nodeVerifyTasks(model, node, UPGRADE_STAGE, 'patch', skip).map((t) => ({ ...t, after: [back] }));
  const uncordon = onApi('uncordon', `uncordon ${node.name}`, uncordonScripts(node.name), 60);
  const last = verify.length > 0 ? verify.map((t) => t.id).sort() : [back];
  return [...chain, ...verify, { ...uncordon, after: last }];
}

/**
 * Uncordon nodes a failed roll left cordoned with nothing installed on them
 * (a drain that did not finish, an update step that failed before Windows
 * Update or the package manager began to install): what patch runs before it
 * reports the failure, so no node is left out of service for nothing.
 */
export function assembleUncordonPlan(model: ClusterModel, nodes: readonly string[]): AssembledPlan {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  return assemblePlan(model, [
    () => ({
      tasks:
        api === undefined
          ? []
          : nodes.map((name) => {
              const s = uncordonScripts(name);
              return task({
                stage: UPGRADE_STAGE,
                host: api.name,
                name: `patch-uncordon-${name}`,
                description: `uncordon ${name}: nothing was installed on it`,
                check: sh(s.check),
                apply: sh(s.apply),
                timeoutSeconds: 60,
              });
            }),
    }),
  ]);
}

/**
 * A control plane's own reboot takes the API server (its static Pod) down
 * with it, and kubectl on the first control plane talks to it: wait up to
 * five minutes for /readyz before waiting for the Node.
 */
function afterApiBack(s: CheckAndApply): CheckAndApply {
  const wait = shellCode(`i=0
until kubectl --kubeconfig=/etc/kubernetes/admin.conf get --raw=/readyz >/dev/null 2>&1; do
  i=$((i + 1)); [ "$i" -le 60 ] || { echo 'the API server did not answer within 300 s' >&2; exit 1; }
  sleep 5
done
`);
  return { check: s.check, apply: shell`${wait}${s.apply}` };
}

const only = (selection: UpdateSelection): string =>
  `${selection.securityOnly ? ' (security only)' : ''}${selection.kbs.length > 0 ? ` (${selection.kbs.join(', ')})` : ''}`;

/** Before the cordon: search, EULAs and download as SYSTEM; a node where that fails is never cordoned. */
function stageWindowsUpdates(selection: UpdateSelection, node: PlanNode): Task {
  const stage = stageUpdates(selection);
  return task({
    stage: UPGRADE_STAGE,
    host: node.name,
    name: 'win-updates-stage',
    description: `search and download pending Windows updates${only(selection)} as SYSTEM (a one-shot scheduled task), before the cordon`,
    check: null,
    apply: powershell(stage.apply),
    timeoutSeconds: SYSTEM_TASK_SECONDS.stage + 120,
  });
}

function windowsUpdates(selection: UpdateSelection, node: PlanNode): Task[] {
  const pending = rebootIfPending();
  const updates = installUpdates();
  return [
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name: 'win-reboot-pending',
      description: 'reboot first when Windows already waits for a reboot (WUA may refuse to install until then)',
      check: powershell(pending.check ?? ''),
      apply: powershell(pending.apply),
      reboots: true,
      timeoutSeconds: 1200,
    }),
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name: 'win-updates',
      description: `install the staged Windows updates${only(selection)} as SYSTEM (a one-shot scheduled task), reboot when asked`,
      check: powershell(updates.check ?? ''),
      apply: powershell(updates.apply),
      reboots: true,
      timeoutSeconds: UPDATE_TIMEOUT_SECONDS,
    }),
  ];
}

/** What the pod-network step waits for after the reboot, by the cluster's CNI. */
function networkBackDescription(model: ClusterModel): string {
  if (model.overlay.plugin === 'calico')
    return `calico-node-windows rebuilt the HNS network ${CALICO_WINDOWS.network}, its endpoint ${CALICO_WINDOWS.hostEndpoint} and its CNI config`;
  return model.windowsHostProcess === undefined
    ? 'flanneld running and its HNS network present'
    : "the flannel pod's HNS network present";
}

function windowsNetwork(model: ClusterModel, node: PlanNode): Task {
  const network = podNetworkBack(model);
  return task({
    stage: UPGRADE_STAGE,
    host: node.name,
    name: 'win-pod-network',
    description: `${networkBackDescription(model)}; else name the updates and their wusa rollback`,
    check: powershell(network.check ?? ''),
    apply: powershell(network.apply),
    timeoutSeconds: 360,
  });
}

function linuxUpdates(selection: UpdateSelection, node: PlanNode): Task {
  const family = linuxDistro(node.os)?.family ?? 'apt';
  const s = installLinuxUpdates(family, selection);
  const tool = family === 'apt' ? 'apt' : 'dnf';
  return task({
    stage: UPGRADE_STAGE,
    host: node.name,
    name: 'linux-updates',
    description: `install pending ${tool} updates${selection.securityOnly ? ' (security only)' : ''}, Kubernetes packages held; reboot when due`,
    check: sh(s.check),
    apply: sh(s.apply),
    reboots: true,
    timeoutSeconds: UPDATE_TIMEOUT_SECONDS,
  });
}
