// Windows workers: each node's recipe (windows-recipe.ts) as a chain of
// tasks in the first-join order. Each step waits for the one before it, so
// the order is in the DAG itself, not in the sort.
import { psQuote } from '../../util/escape/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { renderWindowsNode } from '../../render/windows/index.js';
import { deleteNodeScript } from '../../render/windows/reset.js';
import { forbiddenFor } from '../../render/windows/services.js';
import { WIN } from '../../render/windows/paths.js';
import { artifactId } from '../artifact-path.js';
import { powershell, powershellCommand, powershellUsingHelpersFile, sh, task } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import type { Command, Task } from '../types.js';
import type { WindowsScripts } from '../../render/windows/step.js';
import { WINDOWS_NODES, type RenderedArtifact } from '../../render/types.js';
import { helpersArtifact } from '../../render/windows/helpers.js';
import { nodeReadyIds } from './driver.js';
import { DEFAULT_WINDOWS_OPTIONS, windowsRecipe, type WindowsOptions } from './windows-recipe.js';
import { oncePer } from '../../util/memo.js';

export { DEFAULT_WINDOWS_OPTIONS, type WindowsOptions } from './windows-recipe.js';

export interface WindowsTaskOptions extends WindowsOptions {
  /** Tasks the join waits for (control plane up, join token minted), by id. */
  readonly joinAfter: readonly string[];
}

export function windowsWorkers(model: ClusterModel): PlanNode[] {
  return model.nodes.filter((n) => n.osFamily === 'windows');
}

export function windowsNodeTasks(
  model: ClusterModel,
  node: PlanNode,
  options: WindowsTaskOptions,
): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const artifacts = renderWindowsNode(model, node);
  const steps = windowsRecipe(model, node, artifacts, options, { join: options.joinAfter });
  const first = nodeReadyIds(model, node);
  const tasks: Task[] = [];
  for (const step of steps) {
    const previous = tasks.at(-1);
    const after = previous === undefined ? first : [previous.id, ...(step.after ?? [])];
    tasks.push(
      task({
        stage: step.stage,
        host: node.name,
        name: step.name,
        description: step.description,
        after,
        ...commandsOf(model, step.scripts),
        uploads: [
          ...step.uploads.map((p) => artifactId(node.name, p)),
          ...(step.sharedUploads ?? []).map((p) => artifactId(WINDOWS_NODES, p)),
        ],
        secrets: step.secrets,
        timeoutSeconds: step.timeoutSeconds,
        ...(step.reboots === undefined ? {} : { reboots: step.reboots }),
      }),
    );
  }
  assertNoForbidden(model, artifacts, tasks);
  return { tasks, artifacts };
}

/**
 * A step's Commands, made once per scripts object: a step every node shares
 * (rendered once per model, one WindowsScripts object) gets the same Commands
 * on every node, found by identity; looking the texts up (as `powershell`
 * does) would hash every node's own scripts too. The apply dot-sources the
 * node's helpers file (placed by the first step, which every later step
 * follows in the chain); the check defines its helpers itself, since
 * `--check` runs checks in no order, on nodes the file may not be on yet.
 */
function commandsOf(model: ClusterModel, scripts: WindowsScripts): { check: Command | null; apply: Command } {
  const made = oncePer(model, 'windows:commands', () => new WeakMap<WindowsScripts, ReturnType<typeof commandsOf>>());
  let commands = made.get(scripts);
  if (commands === undefined) {
    commands = {
      check: scripts.check === null ? null : powershellCommand(scripts.check),
      apply: powershellUsingHelpersFile(scripts.apply),
    };
    made.set(scripts, commands);
  }
  return commands;
}

/**
 * A locked gate or removed flag in any file or script is a kubemix bug: refuse
 * to plan it. Files every node shares (one string each) and Commands every
 * node shares (one object) are checked once; one pattern scans each text.
 */
export function assertNoForbidden(
  model: ClusterModel,
  artifacts: readonly RenderedArtifact[],
  tasks: readonly Task[],
): void {
  const checkedTexts = oncePer(model, 'windows:checked-texts', () => new Set<string>());
  const checkedCommands = oncePer(model, 'windows:checked-commands', () => new WeakSet<Command>());
  const forbidden = oncePer(model, 'windows:forbidden', () => {
    const words = forbiddenFor(model.versions.kubernetes).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    // Three `includes` scans per text took three times one alternation's.
    return words.length === 0 ? /(?!)/ : new RegExp(words.join('|'));
  });
  const check = (text: string): void => {
    const bad = forbidden.exec(text)?.[0];
    if (bad !== undefined)
      throw new Error(`Windows plan for Kubernetes ${model.versions.kubernetes} contains ${bad}, which it rejects`);
  };
  for (const { content } of artifacts) {
    if (checkedTexts.has(content)) continue;
    check(content);
    checkedTexts.add(content);
  }
  for (const t of tasks)
    for (const command of [t.apply, t.check]) {
      if (command === null || checkedCommands.has(command)) continue;
      check(command.script);
      checkedCommands.add(command);
    }
}

/** The plan contributor: every Windows worker's tasks and files. */
export function windowsTasks(
  model: ClusterModel,
  options: WindowsTaskOptions = { ...DEFAULT_WINDOWS_OPTIONS, joinAfter: [] },
): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const parts = windowsWorkers(model).map((n) => windowsNodeTasks(model, n, options));
  if (parts.length === 0) return { tasks: [], artifacts: [] };
  // The helpers file: one artifact every node's win-helpers task uploads.
  const helpers = helpersArtifact();
  assertNoForbidden(model, [helpers], []);
  return { tasks: parts.flatMap((p) => p.tasks), artifacts: [helpers, ...parts.flatMap((p) => p.artifacts)] };
}

/**
 * Windows workers' part of `kubemix down` (plan/reset.ts assembleResetPlan):
 * run the rendered reset script on each node, then delete its Node object
 * from the first control-plane node.
 * `resets`: the hosts `down` resets (all by default); a Node object is
 * deleted only through a controller that is reset too.
 */
export function windowsResetTasks(model: ClusterModel, resets: (host: string) => boolean = () => true): Task[] {
  const first = model.nodes.find((n) => n.role === 'control-plane');
  const controller = first !== undefined && resets(first.name) ? first : undefined;
  return windowsWorkers(model)
    .filter((n) => resets(n.name))
    .flatMap((node) => {
      const reset = task({
        stage: 'task-cleanup-hypervisors',
        host: node.name,
        name: 'win-reset',
        description: 'stop and delete the services, HNS networks and endpoints, CNI and kubelet state',
        check: null,
        apply: powershell(`& ${psQuote(WIN.resetScript)}\n`),
        uploads: [artifactId(node.name, WIN.resetScript)],
        timeoutSeconds: 600,
      });
      if (controller === undefined) return [reset];
      const del = task({
        stage: 'task-cleanup-hypervisors',
        host: controller.name,
        name: `delete-node-${node.name}`,
        description: `delete the Node object ${node.name.toLowerCase()}`,
        after: [reset.id],
        check: null,
        apply: sh(deleteNodeScript(node)),
        timeoutSeconds: 60,
      });
      return [reset, del];
    });
}
