// The object store behind the API stand-in (test/helpers/kube-api-standin.ts):
// every change to a namespace or a pod bumps a resourceVersion and is kept as
// a watch event, so lists carry metadata.resourceVersion and watches
// (`?watch=true&resourceVersion=N`) stream, one JSON object a line as the API
// reference's watch wire format has it, the events after N that match, then
// new ones as they happen; BOOKMARK events (`allowWatchBookmarks`) before
// the server ends a watch; an ERROR event carrying a 410 Expired Status for a
// resourceVersion the store says it no longer has.
import type { ServerResponse } from 'node:http';

type Obj = Record<string, any>;

interface Event {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly kind: string;
  readonly object: Obj;
}

interface Watcher {
  readonly kind: string;
  readonly match: (o: Obj) => boolean;
  readonly res: ServerResponse;
}

export interface WatchOptions {
  /** Each watch is ended by the server after this many ms (a BOOKMARK first when asked for). */
  readonly closeAfterMs?: number;
  /** The first N watch requests get an ERROR 410 Expired event (etcd compacted that history). */
  readonly goneFirst?: number;
  /** Watches are refused with 403 (a role without the watch verb). */
  readonly forbidden?: boolean;
}

export const statusText = (code: number, reason: string, message: string, extra: Obj = {}): string =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...extra,
  });

/** `k=v` or `k` (exists); `metadata.name=x` for fields. What verify sends, no more. */
export function matcher(query: URLSearchParams): (o: Obj) => boolean {
  const [lk, lv] = (query.get('labelSelector') ?? '').split('=');
  const [fk, fv] = (query.get('fieldSelector') ?? '').split('=');
  return (o) =>
    (lk === undefined ||
      lk === '' ||
      (lv === undefined ? o['metadata'].labels?.[lk] !== undefined : o['metadata'].labels?.[lk] === lv)) &&
    (fk === undefined || fk === '' || (fk === 'metadata.name' && o['metadata'].name === fv));
}

export class WatchStore {
  rv = 100;
  readonly events: Event[] = [];
  private readonly watchers = new Set<Watcher>();
  private watches = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly o: WatchOptions = {}) {}

  /** Records a change of `object` (its resourceVersion set) and sends it to the watches it matches. */
  emit(type: Event['type'], kind: string, object: Obj): void {
    this.rv += 1;
    object['metadata'] = { ...object['metadata'], resourceVersion: String(this.rv) };
    const e: Event = { rv: this.rv, type, kind, object: JSON.parse(JSON.stringify(object)) as Obj };
    this.events.push(e);
    for (const w of this.watchers)
      if (w.kind === kind && w.match(e.object)) w.res.write(`${JSON.stringify({ type, object: e.object })}\n`);
  }

  /** Serves a watch request for `kind` objects matching `match` (and `ns` when given). */
  serve(res: ServerResponse, kind: string, query: URLSearchParams, match: (o: Obj) => boolean): void {
    this.watches += 1;
    if (this.o.forbidden === true) {
      res
        .writeHead(403, { 'content-type': 'application/json' })
        .end(statusText(403, 'Forbidden', `${kind.toLowerCase()}s is forbidden: cannot watch resource`));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // As kube-apiserver does: the headers go out at once, events follow as they happen.
    res.flushHeaders();
    const from = Number(query.get('resourceVersion') ?? '0');
    if (this.watches <= (this.o.goneFirst ?? 0)) {
      const object = JSON.parse(statusText(410, 'Expired', `too old resource version: ${from} (${this.rv})`)) as Obj;
      res.end(`${JSON.stringify({ type: 'ERROR', object })}\n`);
      return;
    }
    for (const e of this.events)
      if (e.rv > from && e.kind === kind && match(e.object))
        res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    const w: Watcher = { kind, match, res };
    this.watchers.add(w);
    const seconds = Number(query.get('timeoutSeconds') ?? '30');
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (query.get('allowWatchBookmarks') === 'true') {
          const bookmark = { kind, apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } };
          res.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
        }
        this.watchers.delete(w);
        res.end();
      },
      this.o.closeAfterMs ?? seconds * 1000,
    );
    this.timers.add(t);
    // The response's close (the client went away, or we ended it): the request's fires once its body is read.
    res.on('close', () => {
      clearTimeout(t);
      this.timers.delete(t);
      this.watchers.delete(w);
    });
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }
}
