// The plan `kubemix diagnose` runs: one read-only task per node, all in
// parallel, each bounded in time (and each Linux section within it),
// printing its sections (sections.ts).
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import { assemblePlan, type AssembledPlan } from '../plan/assemble.js';
import { powershell, sh, task } from '../plan/task.js';
import {
  collectScript,
  collectShellScript,
  linuxSections,
  servicesSections,
  windowsSections,
  type Section,
} from './sections.js';

export const DIAGNOSE_TASK = 'diagnose';
export const DIAGNOSE_TIMEOUT_SECONDS = 120;

/** Nodes to collect from, the services node included: all, or those named. */
export function diagnosedNodes(model: ClusterModel, only: readonly string[] | undefined): PlanNode[] {
  return only === undefined ? [...model.nodes] : model.nodes.filter((n) => only.includes(n.name));
}

function sectionsOf(model: ClusterModel, n: PlanNode, api: PlanNode | undefined): Section[] {
  if (n.osFamily === 'windows') return windowsSections(model);
  if (n.role === 'services') return servicesSections(model);
  return linuxSections(model, n, n === api);
}

export function assembleDiagnosePlan(model: ClusterModel, nodes: readonly PlanNode[]): AssembledPlan {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  return assemblePlan(model, [
    () => ({
      tasks: nodes.map((n) => {
        const windows = n.osFamily === 'windows';
        const sections = sectionsOf(model, n, api);
        const script = windows ? collectScript('powershell', sections) : collectShellScript(sections);
        return task({
          stage: 'task-post-deployment',
          host: n.name,
          name: DIAGNOSE_TASK,
          description: `collect ${sections.map((s) => s.name).join(', ')}`,
          check: null,
          apply: typeof script === 'string' ? powershell(script) : sh(script),
          timeoutSeconds: DIAGNOSE_TIMEOUT_SECONDS,
        });
      }),
    }),
  ]);
}
