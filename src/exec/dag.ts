// The DAG scheduler: a task starts as soon as every task it comes `after` is
// done, each host runs up to `concurrency` tasks at once, hosts never wait for
// each other (no lockstep). One AbortSignal: once aborted nothing new starts,
// running work finishes, whatever never started ends `cancelled`.

export interface DagNode {
  readonly id: string;
  readonly host: string;
  readonly after: readonly string[];
}

export type Outcome = 'done' | 'failed' | 'skipped' | 'cancelled';

export interface DagOptions {
  readonly concurrency: number;
  readonly signal: AbortSignal;
}

export interface DagHooks<N extends DagNode> {
  readonly work: (node: N) => Promise<Outcome>;
  /** A node that will not run because `cause` did not end done. */
  readonly blocked: (node: N, cause: string, outcome: Outcome) => void;
}

export function runDag<N extends DagNode>(
  nodes: readonly N[],
  options: DagOptions,
  hooks: DagHooks<N>,
): Promise<Map<string, Outcome>> {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const waiting = new Map(nodes.map((n) => [n.id, n.after.filter((d) => byId.has(d)).length]));
  const dependents = new Map<string, string[]>();
  for (const n of nodes)
    for (const d of n.after) if (byId.has(d)) dependents.set(d, [...(dependents.get(d) ?? []), n.id]);
  const ready = new Map<string, N[]>();
  const running = new Map<string, number>();
  const outcomes = new Map<string, Outcome>();
  let active = 0;

  const enqueue = (n: N): void => {
    const queue = ready.get(n.host) ?? [];
    queue.push(n);
    queue.sort((a, b) => (index.get(a.id) ?? 0) - (index.get(b.id) ?? 0));
    ready.set(n.host, queue);
  };
  for (const n of nodes) if (waiting.get(n.id) === 0) enqueue(n);

  return new Promise((resolve) => {
    const finishIfIdle = (): void => {
      if (active > 0) return;
      if (!options.signal.aborted && [...ready.values()].some((q) => q.length > 0)) return;
      for (const n of nodes) if (!outcomes.has(n.id)) outcomes.set(n.id, 'cancelled');
      options.signal.removeEventListener('abort', pump);
      resolve(outcomes);
    };
    const block = (id: string, cause: string, outcome: Outcome): void => {
      for (const d of dependents.get(id) ?? []) {
        const node = byId.get(d);
        if (!node || outcomes.has(d)) continue;
        const result: Outcome = outcome === 'cancelled' ? 'cancelled' : 'skipped';
        outcomes.set(d, result);
        hooks.blocked(node, cause, result);
        block(d, cause, result);
      }
    };
    const settle = (n: N, outcome: Outcome): void => {
      outcomes.set(n.id, outcome);
      active -= 1;
      running.set(n.host, (running.get(n.host) ?? 1) - 1);
      if (outcome === 'done') {
        for (const d of dependents.get(n.id) ?? []) {
          const left = (waiting.get(d) ?? 1) - 1;
          waiting.set(d, left);
          const node = byId.get(d);
          if (left === 0 && node && !outcomes.has(d)) enqueue(node);
        }
      } else block(n.id, n.id, outcome);
      pump();
    };
    function pump(): void {
      if (!options.signal.aborted) {
        for (const [host, queue] of ready) {
          while (queue.length > 0 && (running.get(host) ?? 0) < options.concurrency) {
            const n = queue.shift() as N;
            running.set(host, (running.get(host) ?? 0) + 1);
            active += 1;
            hooks.work(n).then(
              (o) => settle(n, o),
              () => settle(n, 'failed'),
            );
          }
        }
      }
      finishIfIdle();
    }
    options.signal.addEventListener('abort', pump);
    pump();
  });
}
