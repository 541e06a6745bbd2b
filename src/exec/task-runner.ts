// One task, start to end: skip when the journal has it done with the same
// inputs, otherwise (re)connect, compare uploads, check, upload, apply,
// capture — retrying transient transport failures with backoff and
// recording every state in the journal.
import type { Command, Task } from '../plan/types.js';
import { isTransient } from '../transport/errors.js';
import type { ExecResult } from '../transport/types.js';
import { isKubemixError } from '../errors.js';
import type { Outcome } from './dag.js';
import type { TaskState } from './journal.js';
import { backoff, inputHashOf, sleep, type RunContext } from './context.js';
import {
  applyFailed,
  captureSecrets,
  fillServedCache,
  keepFacts,
  prepareUploads,
  runCommand,
  runConverge,
  staleUploads,
} from './task-steps.js';
import { waitForReboot } from './reboot.js';
import { pushImages } from './image-push.js';
import { TaskClock } from './task-clock.js';

function message(error: unknown): string {
  if (isKubemixError(error)) return error.hint === undefined ? error.message : `${error.message} (hint: ${error.hint})`;
  return error instanceof Error ? error.message : String(error);
}

async function connect(task: Task, ctx: RunContext, attempt: number): Promise<void> {
  const t = ctx.transports.get(task.host);
  if (!t || t.connected) return;
  const started = Date.now();
  ctx.bus.emit({ type: 'host:connecting', host: task.host, attempt });
  await t.connect();
  ctx.bus.emit({ type: 'host:connected', host: task.host, ms: Date.now() - started });
}

/** Check and, when needed, apply. Returns whether apply ran. */
async function converge(task: Task, ctx: RunContext, clock: TaskClock): Promise<boolean> {
  const t = ctx.transports.get(task.host);
  if (!t) throw new Error(`no transport for ${task.host}`);
  const served = await clock.time('transfer', async () => {
    await ctx.downloads.resolveFor(task);
    return (await fillServedCache(task, ctx, t)) + (await pushImages(task, ctx, t));
  });
  const uploads = await clock.time('prepare', async () => prepareUploads(task, ctx));
  const stale = await clock.time('compare', () => staleUploads(task, uploads, t));
  // Uploads an apply consumes (secrets it deletes) are missing by design: the check alone decides,
  // and when it fails they are placed between check and apply (so not in one round trip).
  const deferred = task.uploadsOnApply === true && stale.length > 0;
  let needed = served > 0 || (stale.length > 0 && !deferred) || task.check === null;
  const command = async (phase: 'check' | 'apply', c: Command) =>
    clock.host(await clock.time('commands', () => runCommand(task, phase, c, ctx)));
  // One round trip for check and apply where the transport can; a rebooting task's apply ends its connection.
  if (!needed && task.check && task.reboots !== true && !deferred) {
    const check = task.check;
    const result = await clock.time('commands', () => runConverge(task, check, ctx));
    if (result !== undefined) return finish(task, ctx, clock, clock.host(result).checkPassed ? undefined : result);
  }
  if (!needed && task.check) needed = (await command('check', task.check)).code !== 0;
  if (!needed) return finish(task, ctx, clock, undefined);
  await clock.time('upload', async () => {
    for (const u of stale)
      await t.upload({
        shell: task.apply.shell,
        privilege: task.apply.privilege,
        remotePath: u.remotePath,
        content: u.content,
        mode: u.mode,
        owner: u.owner,
      });
  });
  const result = await command('apply', task.apply);
  if (result.code === 0 && task.reboots === true)
    await clock.time('reboot', () => waitForReboot(task, ctx, (attempt) => connect(task, ctx, attempt)));
  return finish(task, ctx, clock, result);
}

/** After apply (`applied`) or a passing check (undefined): secrets captured, facts kept. Returns whether apply ran. */
async function finish(
  task: Task,
  ctx: RunContext,
  clock: TaskClock,
  applied: ExecResult | undefined,
): Promise<boolean> {
  if (applied !== undefined && applied.code !== 0) throw applyFailed(task, applied);
  return clock.time('finish', async () => {
    if (applied === undefined) {
      await captureSecrets(task, ctx, true);
      return false;
    }
    await captureSecrets(task, ctx, false);
    await keepFacts(task, applied, ctx);
    return true;
  });
}

export async function runTask(task: Task, inputHash: string, forced: boolean, ctx: RunContext): Promise<Outcome> {
  const { journal, bus } = ctx;
  const base = { id: task.id, host: task.host, stage: task.stage };
  const capturesMissing = (task.captures ?? []).some((c) => !ctx.secrets.has(c.name));
  if (!forced && !capturesMissing && journal?.isDone(task.id, inputHash)) {
    bus.emit({ type: 'task', ...base, state: 'skipped', attempt: 0, reason: 'done (journal, same inputs)' });
    return 'done';
  }
  const startedAt = new Date().toISOString();
  const started = Date.now();
  const record = (
    state: TaskState,
    attempts: number,
    extra: { changed?: boolean; error?: string } = {},
    durable = true,
  ): Promise<void> =>
    journal?.record(
      task.id,
      {
        state,
        host: task.host,
        inputHash,
        attempts,
        startedAt,
        ...(state === 'running' ? {} : { finishedAt: new Date().toISOString() }),
        ...extra,
      },
      durable,
    ) ?? Promise.resolve();
  for (let attempt = 1; ; attempt++) {
    const down = ctx.down.get(task.host);
    if (down !== undefined) return fail(task, ctx, base, attempt, started, `${task.host} unreachable: ${down}`, record);
    bus.emit({ type: 'task', ...base, state: 'running', attempt });
    await record('running', attempt, {}, false);
    try {
      const clock = new TaskClock();
      await clock.time('connect', () => connect(task, ctx, attempt));
      const changed = await converge(task, ctx, clock);
      await record('done', attempt, { changed });
      const hostMs = clock.hostTotal === undefined ? {} : { hostMs: clock.hostTotal };
      const elapsedMs = Date.now() - started;
      bus.emit({
        type: 'task',
        ...base,
        state: 'done',
        attempt,
        changed,
        elapsedMs,
        ...hostMs,
        phasesMs: clock.phases,
      });
      return 'done';
    } catch (error) {
      const text = ctx.redactor.redact(message(error));
      if (isTransient(error) && attempt < ctx.retry.attempts && !ctx.signal.aborted) {
        const retryInMs = backoff(ctx.retry, attempt);
        bus.emit({ type: 'task', ...base, state: 'retrying', attempt, error: text, retryInMs });
        await record('retrying', attempt, { error: text }, false);
        await sleep(retryInMs, ctx.signal);
        continue;
      }
      if (isTransient(error) && ctx.signal.aborted) {
        await record('cancelled', attempt, { error: text });
        bus.emit({ type: 'task', ...base, state: 'cancelled', attempt, reason: 'interrupted while retrying' });
        return 'cancelled';
      }
      if (isTransient(error) || (isKubemixError(error) && error.code === 'host.key-refused'))
        ctx.down.set(task.host, text);
      const suffix = isTransient(error) ? ` (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})` : '';
      return fail(task, ctx, base, attempt, started, `${text}${suffix}`, record);
    }
  }
}

async function fail(
  task: Task,
  ctx: RunContext,
  base: { id: string; host: string; stage: string },
  attempt: number,
  started: number,
  error: string,
  record: (s: TaskState, a: number, e: { error: string }) => Promise<void>,
): Promise<Outcome> {
  const text = error.includes(task.id) ? error : `${task.id}: ${error}`;
  await record('failed', attempt, { error: text });
  ctx.bus.emit({ type: 'task', ...base, state: 'failed', attempt, error: text, elapsedMs: Date.now() - started });
  return 'failed';
}

/** --check: would this task change its host? Runs only read-only steps. */
export async function checkTask(task: Task, ctx: RunContext): Promise<{ wouldChange: boolean; reason: string }> {
  const missing = task.secrets.filter((s) => !ctx.secrets.has(s));
  if (missing.length > 0)
    return {
      wouldChange: true,
      reason: `needs secret${missing.length === 1 ? '' : 's'} ${missing.join(', ')} not known yet`,
    };
  const t = ctx.transports.get(task.host);
  if (!t) throw new Error(`no transport for ${task.host}`);
  await ctx.downloads.resolveFor(task);
  await connect(task, ctx, 1);
  const stale = await staleUploads(task, prepareUploads(task, ctx), t);
  if (stale.length > 0)
    return { wouldChange: true, reason: `files differ: ${stale.map((u) => u.remotePath).join(', ')}` };
  if (task.check === null) {
    // Read-only and always-applied tasks have no check: done before with the same inputs means nothing to change.
    const done = ctx.journal?.isDone(task.id, inputHashOf(task, ctx)) === true;
    return done
      ? { wouldChange: false, reason: 'done before with the same inputs (no check)' }
      : { wouldChange: true, reason: 'no check: always applied' };
  }
  const r = await runCommand(task, 'check', task.check, ctx);
  return r.code === 0
    ? { wouldChange: false, reason: 'check passed' }
    : { wouldChange: true, reason: `check exited ${r.code}` };
}
