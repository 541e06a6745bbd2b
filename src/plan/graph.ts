// The task graph's invariants: unique ids, dependencies that exist and are
// never in a later stage, no cycles. A violation is a kubemix bug, so it
// throws a plain Error (exit 4 with a crash log), printing the cycle whole.
import { STAGES, type Task } from './types.js';

export function checkGraph(tasks: readonly Task[]): void {
  const byId = new Map<string, Task>();
  for (const t of tasks) {
    if (byId.has(t.id)) throw new Error(`duplicate task id ${t.id}`);
    byId.set(t.id, t);
  }
  const stageIndex = new Map<string, number>(STAGES.map((s, i) => [s, i]));
  for (const t of tasks) {
    for (const dep of t.after) {
      const d = byId.get(dep);
      if (d === undefined) throw new Error(`task ${t.id} depends on unknown task ${dep}`);
      if ((stageIndex.get(d.stage) ?? 0) > (stageIndex.get(t.stage) ?? 0))
        throw new Error(`task ${t.id} depends on ${dep}, which is in a later stage`);
    }
  }
  const cycle = findCycle(tasks, byId);
  if (cycle !== undefined) throw new Error(`task dependency cycle: ${cycle.join(' → ')}`);
}

function findCycle(tasks: readonly Task[], byId: ReadonlyMap<string, Task>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'open') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'open');
    stack.push(id);
    for (const dep of byId.get(id)?.after ?? []) {
      const found = visit(dep);
      if (found !== undefined) return found;
    }
    stack.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const t of tasks) {
    const found = visit(t.id);
    if (found !== undefined) return found;
  }
  return undefined;
}
