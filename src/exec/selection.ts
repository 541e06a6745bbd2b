// Which tasks a run touches: --stop-after / --stop-before STAGE, --only HOST,
// --from TASK (that task and every later one in plan order, re-checked even
// when the journal says done).
import { InputError } from '../errors.js';
import { STAGES, type Plan, type Stage, type Task } from '../plan/types.js';

export interface SelectionOptions {
  readonly stopAfter?: Stage | undefined;
  readonly stopBefore?: Stage | undefined;
  readonly only?: readonly string[] | undefined;
  readonly from?: string | undefined;
}

export interface Selection {
  /** Selected tasks in run order (stage, then plan order). */
  readonly tasks: readonly Task[];
  /** Tasks re-checked and applied even when the journal has them done. */
  readonly forced: ReadonlySet<string>;
}

export function parseStage(value: string, flag: string): Stage {
  if ((STAGES as readonly string[]).includes(value)) return value as Stage;
  throw new InputError('flags.stage', `${flag}: unknown stage ${value}`, { hint: `stages: ${STAGES.join(', ')}` });
}

export function orderTasks(plan: Plan): Task[] {
  return plan.tasks
    .map((t, i) => ({ t, i }))
    .sort((a, b) => STAGES.indexOf(a.t.stage) - STAGES.indexOf(b.t.stage) || a.i - b.i)
    .map((x) => x.t);
}

export function selectTasks(plan: Plan, options: SelectionOptions): Selection {
  const ordered = orderTasks(plan);
  const known = new Set([...plan.hosts.map((h) => h.name), 'local']);
  for (const h of options.only ?? []) {
    if (!known.has(h))
      throw new InputError('flags.only', `--only: unknown host ${h}`, { hint: `hosts: ${[...known].join(', ')}` });
  }
  let fromIndex = 0;
  if (options.from !== undefined) {
    fromIndex = ordered.findIndex((t) => t.id === options.from);
    if (fromIndex < 0)
      throw new InputError('flags.from', `--from: unknown task ${options.from}`, {
        hint: 'task ids are `<stage>/<host>/<name>`; `kubemix logs` and the journal list them',
      });
  }
  const last = options.stopAfter === undefined ? STAGES.length - 1 : STAGES.indexOf(options.stopAfter);
  const end = options.stopBefore === undefined ? STAGES.length : STAGES.indexOf(options.stopBefore);
  const tasks = ordered.filter((t, i) => {
    const s = STAGES.indexOf(t.stage);
    return i >= fromIndex && s <= last && s < end && (options.only === undefined || options.only.includes(t.host));
  });
  return { tasks, forced: new Set(options.from === undefined ? [] : tasks.map((t) => t.id)) };
}
