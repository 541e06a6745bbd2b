// The plan `kubemix diagnose` runs: one read-only task per node, all in
// parallel, each bounded in time (and each Linux section within it),
// printing its sections (sections.ts).
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import { assemblePlan, type AssembledPlan } from '../plan/assemble.js';
import { powershell, sh, task } from '../plan/task.js';
import {
  collectPowerShellScript,
  collectShellScript,
  linuxSections,
  servicesSections,
  windowsSections,
} from './sections.js';
import type { PowerShellSection, Section } from './types.js';

export const DIAGNOSE_TASK = 'diagnose';
export const DIAGNOSE_TIMEOUT_SECONDS = 120;

/** Nodes to collect from, the services node included: all, or those named. */
export function diagnosedNodes(model: ClusterModel, only: readonly string[] | undefined): PlanNode[] {
  return only === undefined ? [...model.nodes] : model.nodes.filter((n) => only.includes(n.name));
}

/** A Linux node's sections (the services node's own set), or a Windows node's. */
function sectionsOf(
  model: ClusterModel,
  n: PlanNode,
  api: PlanNode | undefined,
): { readonly sh: Section[] } | { readonly powershell: PowerShellSection[] } {
  if (n.osFamily === 'windows') return { powershell: windowsSections(model) };
  if (n.role === 'services') return { sh: servicesSections(model) };
  return { sh: linuxSections(model, n, n === api) };
}

export function assembleDiagnosePlan(model: ClusterModel, nodes: readonly PlanNode[]): AssembledPlan {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  return assemblePlan(model, [
    () => ({
      tasks: nodes.map((n) => {
        const of = sectionsOf(model, n, api);
        const names = 'sh' in of ? of.sh.map((s) => s.name) : of.powershell.map((s) => s.name);
        return task({
          stage: 'task-post-deployment',
          host: n.name,
          name: DIAGNOSE_TASK,
          description: `collect ${names.join(', ')}`,
          check: null,
          apply: 'sh' in of ? sh(collectShellScript(of.sh)) : powershell(collectPowerShellScript(of.powershell)),
          timeoutSeconds: DIAGNOSE_TIMEOUT_SECONDS,
        });
      }),
    }),
  ]);
}
