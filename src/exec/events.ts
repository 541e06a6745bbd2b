// What the executor tells the world. Renderers (TTY, plain, NDJSON, tests)
// subscribe; every event passes the redactor before any subscriber sees it.
import type { TaskState } from './journal.js';
import type { Redactor } from './secrets.js';
import type { PhasesMs } from './task-clock.js';

export type RunMode = 'apply' | 'check';

/**
 * What the deployer's download cache did with a file: `fetched` from its
 * source, `seeded` from --downloads DIR, `cached` (already held), `uploaded`
 * to the services node's cache.
 */
export type DownloadAction = 'fetched' | 'seeded' | 'cached' | 'uploaded';

interface Timed {
  /** Milliseconds since the run started. */
  readonly t: number;
}

export type ExecEvent = Timed &
  (
    | {
        readonly type: 'run:start';
        readonly mode: RunMode;
        readonly cluster: string;
        readonly planHash: string;
        readonly hosts: readonly string[];
        readonly tasks: number;
        readonly selected: number;
      }
    | { readonly type: 'host:connecting'; readonly host: string; readonly attempt: number }
    | { readonly type: 'host:connected'; readonly host: string; readonly ms: number }
    | {
        readonly type: 'task';
        readonly id: string;
        readonly host: string;
        readonly stage: string;
        readonly state: TaskState;
        readonly attempt: number;
        readonly elapsedMs?: number;
        /** done: the task's check and apply scripts' own time on the host (its clock), when the host reports it. */
        readonly hostMs?: number;
        /** done: where the last attempt's time went as kubemix saw it (task-clock.ts); the rest of elapsedMs is retries and the journal. */
        readonly phasesMs?: PhasesMs;
        readonly changed?: boolean;
        readonly reason?: string;
        readonly error?: string;
        readonly retryInMs?: number;
      }
    | {
        readonly type: 'task:output';
        readonly id: string;
        readonly host: string;
        readonly stream: 'stdout' | 'stderr';
        readonly line: string;
      }
    | {
        readonly type: 'check:result';
        readonly id: string;
        readonly host: string;
        readonly stage: string;
        readonly wouldChange: boolean;
        readonly reason: string;
      }
    | {
        readonly type: 'secret:stored';
        readonly name: string;
        readonly source: 'generated' | 'captured' | 'read';
        readonly by?: string;
      }
    | {
        readonly type: 'download';
        readonly id: string;
        readonly action: DownloadAction;
        readonly sha256: string;
        readonly host?: string;
        readonly bytes?: number;
      }
    | { readonly type: 'lock:stale'; readonly pid: number; readonly host: string }
    | {
        readonly type: 'run:end';
        readonly mode: RunMode;
        readonly ok: boolean;
        readonly interrupted: boolean;
        readonly elapsedMs: number;
        readonly counts: Readonly<Record<TaskState, number>>;
        readonly failed: readonly { readonly id: string; readonly host: string; readonly error: string }[];
        readonly changes?: number;
      }
  );

type Distribute<T> = T extends unknown ? Omit<T, 't'> : never;
export type EventInput = Distribute<ExecEvent>;
export type Listener = (event: ExecEvent) => void;

export class EventBus {
  private readonly listeners = new Set<Listener>();
  private readonly started = Date.now();
  private redactor: Redactor | undefined;

  useRedactor(redactor: Redactor): void {
    this.redactor = redactor;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(input: EventInput): void {
    const raw = { t: Date.now() - this.started, ...input } as ExecEvent;
    const redactor = this.redactor;
    // Each string on its own: a shape rule rewriting JSON text could leave it unparsable.
    const event = redactor
      ? (JSON.parse(JSON.stringify(raw), (_k, v: unknown) =>
          typeof v === 'string' ? redactor.redact(v) : v,
        ) as ExecEvent)
      : raw;
    for (const l of this.listeners) l(event);
  }
}
