// The patch query: what `kubemix patch` asks every node before it touches
// any, so a node with nothing pending is never cordoned, drained or
// rebooted, and what `patch --check` prints. One read-only task per node,
// all in parallel; each prints `pending<TAB>id<TAB>title` per pending update
// and `reboot-required` when the host waits for a reboot. Pure: the plan and
// the parser of its output.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { listPendingUpdates, type UpdateSelection } from '../../render/windows/updates.js';
import { assemblePlan, type AssembledPlan } from '../assemble.js';
import { powershell, sh, task } from '../task.js';
import { listLinuxPending } from '../../render/linux/updates.js';
import { linuxDistro } from '../../matrix/index.js';

export const PATCH_QUERY_TASK = 'patch-pending';
/** The update search can take minutes on Windows (the Windows Update Agent contacts its service). */
export const PATCH_QUERY_TIMEOUT_SECONDS = 600;

export interface PendingUpdate {
  /** KB articles (Windows, comma-separated) or the package name (Linux). */
  readonly id: string;
  /** The update's title, or the package's versions (`1.2 → 1.3`). */
  readonly title: string;
}

export interface NodePending {
  readonly updates: readonly PendingUpdate[];
  readonly rebootRequired: boolean;
}

/** Something to do on this node: an update to install, or a reboot it waits for. */
export function needsPatch(p: NodePending | undefined): boolean {
  return p !== undefined && (p.updates.length > 0 || p.rebootRequired);
}

export function assemblePatchQueryPlan(
  model: ClusterModel,
  nodes: readonly PlanNode[],
  selection: UpdateSelection,
): AssembledPlan {
  return assemblePlan(model, [
    () => ({
      tasks: nodes.map((n) =>
        task({
          stage: 'task-gather-facts',
          host: n.name,
          name: PATCH_QUERY_TASK,
          description: 'list the pending updates and whether a reboot is pending; install nothing',
          check: null,
          apply:
            n.osFamily === 'windows'
              ? powershell(listPendingUpdates(selection))
              : sh(listLinuxPending(linuxDistro(n.os)?.family ?? 'apt', selection)),
          timeoutSeconds: PATCH_QUERY_TIMEOUT_SECONDS,
        }),
      ),
    }),
  ]);
}

/** The query's output lines → what is pending; other lines (progress, warnings) are ignored. */
export function parsePending(lines: readonly string[]): NodePending {
  const updates: PendingUpdate[] = [];
  let rebootRequired = false;
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '');
    if (line === 'reboot-required') rebootRequired = true;
    const m = /^pending\t([^\t]*)\t(.*)$/.exec(line);
    if (m !== null) updates.push({ id: m[1] ?? '', title: m[2] ?? '' });
  }
  return { updates, rebootRequired };
}

/** `--check`'s report: every node's pending updates, or that it has none. */
export function pendingText(pending: ReadonlyMap<string, NodePending>): string {
  return [...pending]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, p]) => {
      if (!needsPatch(p)) return `${node}: nothing pending\n`;
      const head = `${node}: ${p.updates.length} pending update(s)${p.rebootRequired ? ', reboot pending' : ''}\n`;
      return head + p.updates.map((u) => `  ${u.id}  ${u.title}\n`).join('');
    })
    .join('');
}
