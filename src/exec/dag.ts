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
    for (const d of n.after) {
      if (!byId.has(d)) continue;
      const list = dependents.get(d);
      if (list === undefined) dependents.set(d, [n.id]);
      else list.push(n.id);
    }
  // Per host, the ready tasks in plan order: a heap, not a list sorted again on every push
  // (a 20 000-task plan spent 41 s re-sorting).
  const ready = new Map<string, Heap<N>>();
  const running = new Map<string, number>();
  const outcomes = new Map<string, Outcome>();
  let active = 0;

  const enqueue = (n: N): void => {
    let queue = ready.get(n.host);
    if (queue === undefined) ready.set(n.host, (queue = new Heap<N>((x) => index.get(x.id) ?? 0)));
    queue.push(n);
  };
  for (const n of nodes) if (waiting.get(n.id) === 0) enqueue(n);

  return new Promise((resolve) => {
    const finishIfIdle = (): void => {
      if (active > 0) return;
      if (!options.signal.aborted && [...ready.values()].some((q) => q.size > 0)) return;
      for (const n of nodes) if (!outcomes.has(n.id)) outcomes.set(n.id, 'cancelled');
      options.signal.removeEventListener('abort', pump);
      resolve(outcomes);
    };
    // Without recursion: a chain of any length is blocked behind its first failure.
    const block = (id: string, cause: string, outcome: Outcome): void => {
      const result: Outcome = outcome === 'cancelled' ? 'cancelled' : 'skipped';
      const todo = [id];
      for (let from = todo.pop(); from !== undefined; from = todo.pop()) {
        for (const d of dependents.get(from) ?? []) {
          const node = byId.get(d);
          if (!node || outcomes.has(d)) continue;
          outcomes.set(d, result);
          hooks.blocked(node, cause, result);
          todo.push(d);
        }
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
          while (queue.size > 0 && (running.get(host) ?? 0) < options.concurrency) {
            const n = queue.pop() as N;
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

/** A binary min-heap by `key`. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly key: (item: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (this.key(a[parent] as T) <= this.key(a[i] as T)) break;
      [a[parent], a[i]] = [a[i] as T, a[parent] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.key(a[l] as T) < this.key(a[m] as T)) m = l;
      if (r < a.length && this.key(a[r] as T) < this.key(a[m] as T)) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i] as T, a[m] as T];
      i = m;
    }
    return top;
  }
}
