// Makes a traced run deterministic. Hosts run in parallel in the executor, so
// the interleaving of their commands depends on timing (journal writes hit
// the disk). The gate lets one task at a time talk to its host: when every
// host that has a task running is waiting at the gate, the task that comes
// first in plan order goes, and keeps the gate until the executor reports it
// finished. Which task each host starts next is still the scheduler's own
// choice (with --concurrency 1), so the trace is the executor's order with
// hosts serialised, the same on every run. `last-first` gives the waiting
// task latest in plan order the gate instead: another order the executor may
// take, in which what only plan order (not the DAG) kept in place moves.
import type { ExecEvent } from '../../src/exec/events.js';

export type GatePriority = 'plan-order' | 'last-first';

const FINISHED = new Set(['done', 'failed', 'skipped', 'cancelled']);

export class SerialGate {
  /** Host → the task the executor is running there (one at a time: concurrency 1). */
  private readonly running = new Map<string, string>();
  private readonly waiting = new Map<string, () => void>();
  private holder: string | undefined;
  private picking = false;

  constructor(
    private readonly order: ReadonlyMap<string, number>,
    private readonly priority: GatePriority = 'plan-order',
  ) {}

  readonly listener = (e: ExecEvent): void => {
    if (e.type !== 'task') return;
    if (e.state === 'running') this.running.set(e.host, e.id);
    if (!FINISHED.has(e.state)) return;
    if (this.running.get(e.host) === e.id) this.running.delete(e.host);
    if (this.holder === e.id) this.holder = undefined;
    this.schedule();
  };

  /** Waits until the task running on `host` may talk to it; returns that task's id. */
  async enter(host: string): Promise<string> {
    const id = this.running.get(host);
    if (id === undefined) throw new Error(`trace: ${host} was contacted outside a task`);
    if (this.holder === id) return id;
    await new Promise<void>((resolve) => {
      this.waiting.set(host, resolve);
      this.schedule();
    });
    return id;
  }

  // After the current macrotask: the scheduler starts follow-up tasks in microtasks.
  private schedule(): void {
    if (this.picking) return;
    this.picking = true;
    setImmediate(() => {
      this.picking = false;
      this.pick();
    });
  }

  private pick(): void {
    if (this.holder !== undefined || this.waiting.size === 0) return;
    for (const host of this.running.keys()) if (!this.waiting.has(host)) return;
    const rank = (host: string): number => this.order.get(this.running.get(host) ?? '') ?? Number.MAX_SAFE_INTEGER;
    const sign = this.priority === 'plan-order' ? 1 : -1;
    const host = [...this.waiting.keys()].sort((a, b) => sign * (rank(a) - rank(b)))[0] as string;
    this.holder = this.running.get(host);
    const release = this.waiting.get(host);
    this.waiting.delete(host);
    release?.();
  }
}
