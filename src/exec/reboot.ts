// A task whose apply reboots its host (Task.reboots): after apply, reconnect
// and run the task's check until it passes, within the task's timeout. The
// host going down and refusing connections meanwhile is the expected path, so
// transient transport failures here are waited through, not retried away.
import { HostError } from '../errors.js';
import type { Task } from '../plan/types.js';
import { isTransient } from '../transport/errors.js';
import { backoff, sleep, type RunContext } from './context.js';
import { runCommand } from './task-steps.js';

export async function waitForReboot(
  task: Task,
  ctx: RunContext,
  connect: (attempt: number) => Promise<void>,
): Promise<void> {
  const check = task.check;
  if (check === null)
    throw new HostError('plan.invalid', `${task.id}: a task that reboots its host needs a check`, { path: task.id });
  const deadline = Date.now() + task.timeoutSeconds * 1000;
  let last = 'the check never passed';
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    // Never sooner than the retry policy's first delay: the reboot is scheduled, not done.
    await sleep(Math.min(backoff(ctx.retry, attempt), Math.max(0, deadline - Date.now())), ctx.signal);
    if (ctx.signal.aborted)
      throw new HostError('task.cancelled', `${task.id}: cancelled while waiting for ${task.host} to reboot`, {
        path: task.id,
      });
    try {
      await connect(attempt);
      const r = await runCommand(task, 'check', check, ctx);
      if (r.code === 0) return;
      last = `the check exited ${r.code}`;
    } catch (error) {
      if (!isTransient(error)) throw error;
      last = error instanceof Error ? error.message : String(error);
    }
  }
  throw new HostError(
    'task.reboot-timeout',
    `${task.host}: ${task.id}: the host did not come back from its reboot within ${task.timeoutSeconds} s (${last})`,
    { path: task.id, hint: `check the host's console; re-run kubemix up once ${task.host} answers` },
  );
}
