// Waiting for objects with list + watch, as Kubernetes clients do (client-go's
// reflector): list, then watch from the list's resourceVersion and apply
// ADDED / MODIFIED / DELETED events to the listed set. BOOKMARK events only
// move the resourceVersion on; a watch the server ends is resumed from the
// last version seen; an ERROR event with 410 Gone ("too old resource
// version": etcd compacted that history) or any watch the server refuses
// (403 without the watch verb, 429) means list again and watch from there.
// So verify sees a pod become Ready when it happens rather than at the next
// poll, and keeps one connection open instead of a list a second.
import { Aborted, retried, sleep, type Apis } from './api.js';
import { nameOf, type Meta } from './objects.js';

export interface Listed<T> {
  readonly items: readonly T[];
  readonly metadata?: { readonly resourceVersion?: string };
}

export interface WatchTarget<T> {
  /** The collection's path, e.g. /api/v1/namespaces/kubemix-verify/pods. */
  readonly path: string;
  /** labelSelector / fieldSelector, the same for list and watch. */
  readonly query: Readonly<Record<string, string>>;
  readonly list: () => Promise<Listed<T>>;
}

export interface WaitOptions {
  readonly ms: number;
  readonly signal: AbortSignal;
  /** Pause before listing again after a refused or failed watch. */
  readonly pollMs: number;
}

type Outcome = { readonly kind: 'ended' | 'gone' | 'failed'; readonly rv: string };

/** Lists, then watches until `done(items)` holds or `ms` pass; returns the items as last seen. */
export async function waitFor<T extends { readonly metadata?: Meta }>(
  a: Apis,
  target: WatchTarget<T>,
  done: (items: T[]) => boolean,
  o: WaitOptions,
): Promise<T[]> {
  const until = Date.now() + o.ms;
  const items = new Map<string, T>();
  const relist = async (): Promise<string> => {
    const l = await retried(o.signal, target.list);
    items.clear();
    for (const i of l.items) items.set(nameOf(i), i);
    return l.metadata?.resourceVersion ?? '';
  };
  let rv = await relist();
  while (!done([...items.values()]) && Date.now() < until) {
    if (o.signal.aborted) throw new Aborted();
    const r = await watchOnce(a, target, rv, items, done, until, o.signal);
    if (o.signal.aborted) throw new Aborted();
    if (r.kind === 'ended') rv = r.rv;
    else {
      if (r.kind === 'failed') await sleep(Math.min(o.pollMs, Math.max(0, until - Date.now())), o.signal);
      rv = await relist();
    }
  }
  return [...items.values()];
}

/** One watch request: applies its events to `items` until done, the deadline, the server ending it or an ERROR. */
function watchOnce<T extends { readonly metadata?: Meta }>(
  a: Apis,
  target: WatchTarget<T>,
  rv: string,
  items: Map<string, T>,
  done: (items: T[]) => boolean,
  until: number,
  signal: AbortSignal,
): Promise<Outcome> {
  return new Promise((resolve) => {
    let last = rv;
    let settled = false;
    let controller: AbortController | undefined;
    const finish = (kind: Outcome['kind']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      controller?.abort();
      resolve({ kind, rv: last });
    };
    const stop = (): void => finish('ended');
    const timer = setTimeout(stop, Math.max(0, until - Date.now()));
    signal.addEventListener('abort', stop, { once: true });
    const query = {
      ...target.query,
      resourceVersion: rv,
      allowWatchBookmarks: true,
      // The server ends the watch by then; the client would otherwise wait on a silent connection.
      timeoutSeconds: Math.max(1, Math.ceil((until - Date.now()) / 1000)),
    };
    const onEvent = (type: string, obj: unknown): void => {
      if (settled) return;
      if (type === 'ERROR') return finish((obj as { code?: unknown } | null)?.code === 410 ? 'gone' : 'failed');
      const o = obj as T;
      const version = o.metadata?.resourceVersion;
      if (typeof version === 'string' && version !== '') last = version;
      if (type === 'DELETED') items.delete(nameOf(o));
      else if (type === 'ADDED' || type === 'MODIFIED') items.set(nameOf(o), o);
      if (type !== 'BOOKMARK' && done([...items.values()])) finish('ended');
    };
    const onDone = (error: unknown): void => {
      if (error === null || error === undefined) return finish('ended');
      finish((error as { statusCode?: unknown }).statusCode === 410 ? 'gone' : 'failed');
    };
    a.watch.watch(target.path, query, onEvent, onDone).then(
      (c) => {
        controller = c;
        if (settled) c.abort();
      },
      () => finish('failed'),
    );
  });
}
