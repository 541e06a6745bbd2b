// --check: every selected task's read-only steps (upload comparison, check)
// on every host, in parallel per host; nothing is uploaded or applied and
// the journal is not touched.
import type { Task } from '../plan/types.js';
import { isKubemixError } from '../errors.js';
import { HostError } from '../errors.js';
import type { ApplyResult, RunContext } from './context.js';
import { runDag } from './dag.js';
import { TASK_STATES, type TaskState } from './journal.js';
import { checkTask } from './task-runner.js';

export async function runChecks(tasks: readonly Task[], ctx: RunContext, concurrency: number): Promise<ApplyResult> {
  const started = Date.now();
  const failed: { id: string; host: string; error: string }[] = [];
  let changes = 0;
  const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
  const flat = tasks.map((t) => ({ ...t, after: [] }));
  await runDag(
    flat,
    { concurrency, signal: ctx.signal },
    {
      work: async (t) => {
        const down = ctx.down.get(t.host);
        try {
          if (down !== undefined) throw new HostError('host.unreachable', down);
          const r = await checkTask(t, ctx);
          if (r.wouldChange) changes += 1;
          counts.done += 1;
          ctx.bus.emit({
            type: 'check:result',
            id: t.id,
            host: t.host,
            stage: t.stage,
            wouldChange: r.wouldChange,
            reason: r.reason,
          });
          return 'done';
        } catch (error) {
          const text = ctx.redactor.redact(
            isKubemixError(error) || error instanceof Error ? error.message : String(error),
          );
          if (down === undefined && isKubemixError(error) && error.code.startsWith('host.')) ctx.down.set(t.host, text);
          counts.failed += 1;
          failed.push({ id: t.id, host: t.host, error: text });
          ctx.bus.emit({
            type: 'task',
            id: t.id,
            host: t.host,
            stage: t.stage,
            state: 'failed',
            attempt: 1,
            error: text,
          });
          return 'failed';
        }
      },
      blocked: () => undefined,
    },
  );
  const ok = failed.length === 0;
  ctx.bus.emit({
    type: 'run:end',
    mode: 'check',
    ok,
    interrupted: ctx.signal.aborted,
    elapsedMs: Date.now() - started,
    counts,
    failed,
    changes,
  });
  if (!ok)
    throw new HostError(
      'check.failed',
      `checks could not run on ${new Set(failed.map((f) => f.host)).size} host(s): ${failed[0]?.host} ${failed[0]?.error}`,
    );
  return { ok, counts, failed, changes };
}
