import type { Artifact, Task } from '../plan/types.js';
import { taskInputHash } from './hash.js';
import type { HostTransport } from '../transport/types.js';
import type { RunDownloads } from './download-run.js';
import type { EventBus } from './events.js';
import type { Journal, TaskState } from './journal.js';
import type { Redactor, SecretStore } from './secrets.js';
import type { SecretInputs } from './secret-inputs.js';

export interface RetryPolicy {
  /** Attempts per task for transient transport failures (1 = no retry). */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 1_000, maxDelayMs: 15_000 };

/** What applyPlan (and its --check mode) returns. */
export interface ApplyResult {
  readonly ok: boolean;
  readonly counts: Readonly<Record<TaskState, number>>;
  readonly failed: readonly { readonly id: string; readonly host: string; readonly error: string }[];
  /** --check: how many tasks would change their host. */
  readonly changes: number;
}

/** Everything a task run needs; built once per run by applyPlan. */
export interface RunContext {
  readonly bus: EventBus;
  readonly journal: Journal | undefined;
  readonly secrets: SecretStore;
  readonly redactor: Redactor;
  readonly artifacts: ReadonlyMap<string, Artifact>;
  readonly contents: ReadonlyMap<string, Buffer>;
  readonly transports: ReadonlyMap<string, HostTransport>;
  readonly signal: AbortSignal;
  readonly retry: RetryPolicy;
  /** Hosts given up on in this run, with the reason. */
  readonly down: Map<string, string>;
  readonly factsDir: string;
  /** Keyed digests of the user-given secrets a task uses, part of its input hash (secret-inputs.ts); none when absent. */
  readonly secretInputs?: SecretInputs;
  /** The plan's downloads, their verified hashes (`{{sha256:ID}}`) and the deployer's cache. */
  readonly downloads: RunDownloads;
  /** `up --images`: the bundles to push into the services registry (Task.pushesImages). */
  readonly images?: { readonly bundles: readonly string[] } | undefined;
  /** What the state directory says the services registry holds (images.json). */
  readonly imagesRecord?: {
    read(): Promise<Record<string, string>>;
    write(record: Record<string, string>): Promise<void>;
  };
}

/** A task's input hash in this run, with its user-given secrets' digests (the journal's key). */
export function inputHashOf(task: Task, ctx: RunContext): string {
  return taskInputHash(task, ctx.artifacts, ctx.downloads.byId, ctx.secretInputs?.(task));
}

export function backoff(policy: RetryPolicy, attempt: number): number {
  const base = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
