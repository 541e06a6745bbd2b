// The task graph's invariants: unique ids, dependencies that exist and are
// never in a later stage, no cycles. A violation is a kubemix bug, so it
// throws a plain Error (exit 4 with a crash log), printing the cycle whole.
// Tasks are numbered once and the search runs on those numbers: a plan of
// 5000 nodes has ~95 000 tasks, and looking every edge up by id twice was a
// visible part of planning.
import { STAGES, type Task } from './types.js';

const STAGE_INDEX = new Map<string, number>(STAGES.map((s, i) => [s, i]));

export function checkGraph(tasks: readonly Task[]): void {
  const index = new Map<string, number>();
  tasks.forEach((t, i) => {
    if (index.has(t.id)) throw new Error(`duplicate task id ${t.id}`);
    index.set(t.id, i);
  });
  const stage = tasks.map((t) => STAGE_INDEX.get(t.stage) ?? 0);
  const deps = tasks.map((t, i) =>
    t.after.map((dep) => {
      const d = index.get(dep);
      if (d === undefined) throw new Error(`task ${t.id} depends on unknown task ${dep}`);
      if ((stage[d] ?? 0) > (stage[i] ?? 0))
        throw new Error(`task ${t.id} depends on ${dep}, which is in a later stage`);
      return d;
    }),
  );
  const cycle = findCycle(deps);
  if (cycle !== undefined) throw new Error(`task dependency cycle: ${cycle.map((i) => tasks[i]?.id).join(' → ')}`);
}

const NEW = 0;
const OPEN = 1;
const DONE = 2;

/** A cycle among `deps` (task numbers, the first repeated at the end), by depth-first search without recursion. */
function findCycle(deps: readonly (readonly number[])[]): number[] | undefined {
  const state = new Uint8Array(deps.length);
  const path: number[] = [];
  const next: number[] = [];
  for (let root = 0; root < deps.length; root++) {
    if (state[root] !== NEW) continue;
    state[root] = OPEN;
    path.push(root);
    next.push(0);
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top] as number;
      const edges = deps[node] ?? [];
      const at = next[top] as number;
      if (at === edges.length) {
        state[node] = DONE;
        path.pop();
        next.pop();
        continue;
      }
      next[top] = at + 1;
      const dep = edges[at] as number;
      if (state[dep] === OPEN) return [...path.slice(path.indexOf(dep)), dep];
      if (state[dep] === NEW) {
        state[dep] = OPEN;
        path.push(dep);
        next.push(0);
      }
    }
  }
  return undefined;
}
