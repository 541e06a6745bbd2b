// Where a cluster stands: the plan (what should be) against the journal
// (what the last runs did). Pure: the CLI reads the journal file.
import type { Plan } from '../plan/types.js';
import { taskInputHash } from './hash.js';
import type { JournalDocument } from './journal.js';
import type { SecretInputs } from './secret-inputs.js';

/** done: finished with today's inputs; outdated: finished, but the task changed since; left: not run (or interrupted); failed: the last attempt failed. */
export type TaskStatus = 'done' | 'outdated' | 'left' | 'failed';

export interface HostStatus {
  readonly host: string;
  readonly done: number;
  readonly left: number;
  readonly failed: number;
  /** The first task not done, in plan order. */
  readonly next?: string;
  readonly failures: readonly { readonly id: string; readonly error: string }[];
}

export interface ClusterStatus {
  readonly complete: boolean;
  readonly planHash: string;
  /** Plan hash the journal was last written for (absent: never run). */
  readonly journalPlanHash?: string;
  readonly hosts: readonly HostStatus[];
  readonly tasks: readonly { readonly id: string; readonly host: string; readonly status: TaskStatus }[];
}

/**
 * `secretInputs`: the digests of the user-given secrets each task uses
 * (secret-inputs.ts specSecretInputs), as `up` hashes them; none by default
 * (a plan without URL credentials).
 */
export function clusterStatus(
  plan: Plan,
  journal: JournalDocument | undefined,
  secretInputs: SecretInputs = () => ({}),
): ClusterStatus {
  const artifacts = new Map(plan.artifacts.map((a) => [a.id, a]));
  const downloads = new Map((plan.downloads ?? []).map((d) => [d.id, d]));
  const tasks = plan.tasks.map((t) => {
    const entry = journal?.tasks[t.id];
    let status: TaskStatus = 'left';
    if (entry?.state === 'done')
      status = entry.inputHash === taskInputHash(t, artifacts, downloads, secretInputs(t)) ? 'done' : 'outdated';
    else if (entry?.state === 'failed') status = 'failed';
    return { id: t.id, host: t.host, status, error: entry?.error };
  });
  const hosts = [...new Set(plan.tasks.map((t) => t.host))].sort().map((host): HostStatus => {
    const mine = tasks.filter((t) => t.host === host);
    const next = mine.find((t) => t.status !== 'done');
    return {
      host,
      done: mine.filter((t) => t.status === 'done').length,
      left: mine.filter((t) => t.status === 'left' || t.status === 'outdated').length,
      failed: mine.filter((t) => t.status === 'failed').length,
      ...(next === undefined ? {} : { next: next.id }),
      failures: mine.filter((t) => t.status === 'failed').map((t) => ({ id: t.id, error: t.error ?? '' })),
    };
  });
  return {
    complete: tasks.every((t) => t.status === 'done'),
    planHash: plan.hash,
    ...(journal === undefined ? {} : { journalPlanHash: journal.planHash }),
    hosts,
    tasks: tasks.map(({ id, host, status }) => ({ id, host, status })),
  };
}
