// applyPlan: the executor's entry point (`kubemix up`). Takes the state
// directory's lock, opens journal and secrets, connects to hosts lazily,
// runs the selected tasks as a DAG and reports through events. Throws
// HostError (exit 3) when tasks failed, InterruptedError (130) when aborted.
import { join } from 'node:path';
import { HostError, InterruptedError } from '../errors.js';
import type { Plan, Task } from '../plan/types.js';
import { KnownHostsFile } from '../transport/known-hosts.js';
import { pinHostKeys } from './pin-host-keys.js';
import { LocalTransport } from '../transport/local.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../transport/ssh.js';
import type { HostTransport } from '../transport/types.js';
import { DEFAULT_RETRY, inputHashOf, type ApplyResult, type RetryPolicy, type RunContext } from './context.js';
import { runDag, type Outcome } from './dag.js';
import { EventBus, type Listener } from './events.js';
import { HostLogs } from './host-logs.js';
import { assertSameCni } from '../plan/cni-switch.js';
import { Journal, TASK_STATES, type TaskState } from './journal.js';
import { acquireLock } from './lock.js';
import { readPlanArtifacts } from './plan-dir.js';
import { Redactor, SecretStore } from './secrets.js';
import { runSecretInputs, taskSecretNames, uploadRefsOf } from './secret-inputs.js';
import { assertUrlSecretsKnown } from './url-secrets.js';
import { ensureDeployerKey } from './deployer-key.js';
import { selectTasks, type SelectionOptions } from './selection.js';
import { prepareStateDir } from './state-dir.js';
import { runChecks } from './check-run.js';
import { runTask } from './task-runner.js';
import { prepareDownloads, type DownloadOptions } from './download-run.js';
import { imagesRecord, type ImageOptions } from './image-push.js';

export type { ApplyResult } from './context.js';

export interface ApplyOptions extends SelectionOptions {
  readonly stateDir: string;
  readonly knownHostsFile?: string | undefined;
  readonly trustNewHosts?: boolean;
  readonly concurrency?: number;
  /** Run checks only; change nothing. */
  readonly check?: boolean;
  readonly signal: AbortSignal;
  readonly listeners?: readonly Listener[];
  /**
   * Secrets the caller read from the user (the credentials split off the
   * spec's URLs), all of them: stored before anything runs, and the stored
   * ones missing here forgotten (in memory only with --check). Left out when
   * there is no spec to read them from: the store is then kept as it is.
   */
  readonly provided?: Readonly<Record<string, string>>;
  readonly retry?: Partial<RetryPolicy>;
  readonly ssh?: Partial<typeof DEFAULT_SSH_OPTIONS>;
  /** ssh-agent socket (SSH_AUTH_SOCK). */
  readonly agent?: string | undefined;
  /**
   * Reaches each selected host (`local` included) instead of SSH and the local
   * shell. Tests pass a recording target here to trace what would run on
   * hosts this machine does not have (kubeadm, Windows).
   */
  readonly transportFor?: (host: string) => HostTransport;
  /** The deployer's download cache (default <state>/downloads), --downloads DIR, and a fetcher for tests. */
  readonly downloads?: DownloadOptions;
  /** `up --images`: bundles pushed into the services registry before its check. */
  readonly images?: ImageOptions;
}

/** Every secret name the tasks use: declared, and referenced by their scripts or uploads. */
function secretNames(tasks: readonly Task[], contents: ReadonlyMap<string, Buffer>): Set<string> {
  const uploadRefs = uploadRefsOf(contents);
  return new Set(tasks.flatMap((t) => [...taskSecretNames(t, uploadRefs)]));
}

export async function applyPlan(
  plan: Plan,
  artifacts: string | ReadonlyMap<string, Buffer>,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const contents = typeof artifacts === 'string' ? await readPlanArtifacts(plan, artifacts) : artifacts;
  const selection = selectTasks(plan, options);
  const paths = await prepareStateDir(options.stateDir);
  const mode = options.check === true ? 'check' : 'apply';
  const lock = mode === 'apply' ? await acquireLock(paths.root) : undefined;
  const bus = new EventBus();
  const secrets = await SecretStore.open(paths.secrets);
  const redactor = new Redactor(secrets);
  bus.useRedactor(redactor);
  const logs = new HostLogs(paths.logs, redactor);
  const unsubscribe = [logs.attach(bus), ...(options.listeners ?? []).map((l) => bus.subscribe(l))];
  const transports = new Map<string, HostTransport>();
  let journal: Journal | undefined;
  try {
    // Only a spec gives the complete set; a plan directory run alone (`up --plan DIR`) keeps what is stored.
    if (options.provided !== undefined) await secrets.provide(options.provided, mode === 'apply');
    assertUrlSecretsKnown(secretNames(selection.tasks, contents), plan.downloads ?? [], secrets);
    // After the spec's values are in the store: a rotated password changes the tasks' input hashes.
    const secretInputs = await runSecretInputs(secrets, contents, mode === 'apply');
    if (lock?.tookOverStale)
      bus.emit({ type: 'lock:stale', pid: lock.tookOverStale.pid, host: lock.tookOverStale.host });
    // --check reads the journal (a check-less task already done with the same inputs is no change) and never writes it.
    journal = await Journal.open(paths.root, plan.cluster.name, plan.hash, mode === 'check' ? 'read' : 'write');
    // A spec that changed cni.plugin since the cluster was deployed is refused before anything runs.
    assertSameCni(plan, journal.doneIds(), journal.path);
    const knownHosts = await new KnownHostsFile(options.knownHostsFile ?? paths.knownHosts).load();
    const concurrency = Math.max(1, options.concurrency ?? 8);
    const selectedHosts = new Set(selection.tasks.map((t) => t.host));
    for (const h of plan.hosts) {
      if (!selectedHosts.has(h.name)) continue;
      transports.set(
        h.name,
        options.transportFor?.(h.name) ??
          new SshTransport(h, {
            ...DEFAULT_SSH_OPTIONS,
            ...options.ssh,
            knownHosts,
            trustNewHosts: options.trustNewHosts === true,
            maxSessions: concurrency,
            agent: options.agent,
          }),
      );
    }
    if (selectedHosts.has('local')) transports.set('local', options.transportFor?.('local') ?? new LocalTransport());
    const downloads = await prepareDownloads(
      plan,
      contents,
      { dir: join(paths.root, 'downloads'), ...options.downloads, fill: (url) => secrets.fill(url, 'download URL') },
      options.signal,
      bus,
    );
    const ctx: RunContext = {
      bus,
      journal,
      secrets,
      redactor,
      contents,
      transports,
      signal: options.signal,
      down: new Map(),
      factsDir: paths.facts,
      downloads,
      secretInputs,
      images: options.images,
      imagesRecord: imagesRecord(paths.root),
      artifacts: new Map(plan.artifacts.map((a) => [a.id, a])),
      retry: { ...DEFAULT_RETRY, ...options.retry },
    };
    bus.emit({
      type: 'run:start',
      mode,
      cluster: plan.cluster.name,
      planHash: plan.hash,
      hosts: [...selectedHosts],
      tasks: plan.tasks.length,
      selected: selection.tasks.length,
    });
    if (mode === 'check') return await runChecks(selection.tasks, ctx, concurrency);
    const captured = new Set(plan.tasks.flatMap((t) => (t.captures ?? []).map((c) => c.name)));
    const wanted = secretNames(selection.tasks, contents);
    for (const name of await ensureDeployerKey(secrets, plan.hosts, wanted, captured, options.agent))
      bus.emit({ type: 'secret:stored', name, source: 'read' });
    for (const name of await secrets.ensureGenerated(wanted, captured))
      bus.emit({ type: 'secret:stored', name, source: 'generated' });
    await pinHostKeys(plan.hosts, secrets, knownHosts);
    return await runApply(plan, selection.tasks, selection.forced, ctx, concurrency);
  } finally {
    await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
    // Folds the log into journal.json; should that fail, snapshot and log on disk still say the same.
    await journal?.close().catch(() => undefined);
    for (const u of unsubscribe) u();
    await logs.close();
    await lock?.release();
  }
}

async function runApply(
  plan: Plan,
  tasks: readonly Task[],
  forced: ReadonlySet<string>,
  ctx: RunContext,
  concurrency: number,
): Promise<ApplyResult> {
  const started = Date.now();
  const hashes = new Map(plan.tasks.map((t) => [t.id, inputHashOf(t, ctx)]));
  const selected = new Set(tasks.map((t) => t.id));
  const states = new Map<string, TaskState>();
  const failed: { id: string; host: string; error: string }[] = [];
  let changes = 0;
  const unsubscribe = ctx.bus.subscribe((e) => {
    if (e.type !== 'task') return;
    states.set(e.id, e.state);
    if (e.state === 'done' && e.changed === true) changes += 1;
    if (e.state === 'failed') failed.push({ id: e.id, host: e.host, error: e.error ?? '' });
  });
  const nodes = tasks.map((t) => {
    const missing = t.after.filter((d) => !selected.has(d) && !ctx.journal?.isDone(d, hashes.get(d) ?? ''));
    return { ...t, blockedBy: missing };
  });
  const outcomes = await runDag(
    nodes,
    { concurrency, signal: ctx.signal },
    {
      work: async (t): Promise<Outcome> => {
        if (t.blockedBy.length > 0) {
          ctx.bus.emit({
            type: 'task',
            id: t.id,
            host: t.host,
            stage: t.stage,
            state: 'skipped',
            attempt: 0,
            reason: `needs ${t.blockedBy.join(', ')}, which is not selected and not done`,
          });
          return 'skipped';
        }
        return runTask(t, hashes.get(t.id) ?? '', forced.has(t.id), ctx);
      },
      blocked: (t, cause, outcome) =>
        ctx.bus.emit({
          type: 'task',
          id: t.id,
          host: t.host,
          stage: t.stage,
          state: outcome === 'cancelled' ? 'cancelled' : 'skipped',
          attempt: 0,
          reason: `${cause} did not finish`,
        }),
    },
  );
  for (const t of tasks)
    if (outcomes.get(t.id) === 'cancelled' && states.get(t.id) !== 'cancelled')
      ctx.bus.emit({
        type: 'task',
        id: t.id,
        host: t.host,
        stage: t.stage,
        state: 'cancelled',
        attempt: 0,
        reason: 'interrupted before it started',
      });
  unsubscribe();
  const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
  for (const s of states.values()) counts[s] += 1;
  const interrupted = ctx.signal.aborted;
  const ok = failed.length === 0 && !interrupted && [...outcomes.values()].every((o) => o === 'done');
  ctx.bus.emit({
    type: 'run:end',
    mode: 'apply',
    ok,
    interrupted,
    elapsedMs: Date.now() - started,
    counts,
    failed,
    changes,
  });
  if (interrupted)
    throw new InterruptedError(`interrupted: journal saved, ${counts.done} task(s) done`, { hint: 're-run to resume' });
  if (!ok) throw runFailed(failed, counts);
  return { ok, counts, failed, changes };
}

function runFailed(
  failed: readonly { id: string; host: string; error: string }[],
  counts: Record<TaskState, number>,
): HostError {
  const first = failed
    .slice(0, 5)
    .map((f) => `  ${f.error.includes(f.id) ? '' : `${f.host} ${f.id}: `}${f.error}`)
    .join('\n');
  const more = failed.length > 5 ? `\n  … and ${failed.length - 5} more` : '';
  return new HostError('run.failed', `${failed.length} task(s) failed, ${counts.skipped} skipped:\n${first}${more}`, {
    hint: 'fix the cause and re-run the same command: done tasks are skipped (resume)',
  });
}
