// Before any task runs: the SHA256 of every download the selected tasks name
// (`{{sha256:ID}}`) or keep in a cache (Task.serves), resolved once on the
// deployer. Files themselves are fetched only for a cache that serves them.
import type { ResolvedDownload } from '../model/downloads.js';
import type { Plan, Task } from '../plan/types.js';
import { DownloadCache, httpFetcher, type Fetcher } from './downloads.js';
import type { EventBus } from './events.js';

export interface DownloadOptions {
  /** Content-addressed cache directory. */
  readonly dir?: string;
  /** --downloads DIR. */
  readonly seed?: string | undefined;
  readonly fetcher?: Fetcher;
}

const REF = /\{\{sha256:([A-Za-z0-9_.\/-]+)\}\}/g;

function namedBy(tasks: readonly Task[], contents: ReadonlyMap<string, Buffer>): Set<string> {
  const ids = new Set<string>();
  for (const t of tasks) {
    const texts = [t.check?.script ?? '', t.apply.script, ...t.uploads.map((u) => contents.get(u.artifact)?.toString('utf8') ?? '')];
    for (const text of texts) for (const m of text.matchAll(REF)) ids.add(m[1] ?? '');
    for (const id of t.serves?.downloads ?? []) ids.add(id);
  }
  return ids;
}

export async function prepareDownloads(
  plan: Plan, tasks: readonly Task[], contents: ReadonlyMap<string, Buffer>, o: DownloadOptions & { readonly dir: string }, signal: AbortSignal, bus: EventBus,
): Promise<{ byId: ReadonlyMap<string, ResolvedDownload>; hashes: ReadonlyMap<string, string>; cache: DownloadCache | undefined }> {
  const byId = new Map((plan.downloads ?? []).map((d) => [d.id, d]));
  const ids = [...namedBy(tasks, contents)].sort();
  if (ids.length === 0) return { byId, hashes: new Map(), cache: undefined };
  const cache = await DownloadCache.open({
    dir: o.dir, seed: o.seed, fetcher: o.fetcher ?? httpFetcher, signal,
    report: (id, action, sha256, bytes) => bus.emit({ type: 'download', id, action, sha256, ...(bytes === undefined ? {} : { bytes }) }),
  });
  const hashes = new Map<string, string>();
  for (const id of ids) {
    const d = byId.get(id);
    // fillDownloads names an id the plan does not list where it is used.
    if (d !== undefined) hashes.set(id, await cache.hashOf(d));
  }
  return { byId, hashes, cache };
}
