// The SHA256 of every download a task names (`{{sha256:ID}}`) or keeps in a
// cache (Task.serves), resolved on the deployer just before that task runs —
// a run that stops earlier (a failed validation, --stop-after) reads nothing
// from the network. Files themselves are fetched only for a cache that serves
// them (task-steps.ts fillServedCache).
import { sha256Refs, type ResolvedDownload } from '../model/downloads.js';
import type { Plan, Task } from '../plan/types.js';
import { DownloadCache, httpFetcher, type Fetcher } from './downloads.js';
import type { EventBus } from './events.js';

export interface DownloadOptions {
  /** Content-addressed cache directory. */
  readonly dir?: string;
  /** --downloads DIR. */
  readonly seed?: string | undefined;
  readonly fetcher?: Fetcher;
  /** Fills the credentials of a download URL (`{{secret:url-userinfo-…}}`) from the secret store. */
  readonly fill?: (url: string) => string;
}

export interface RunDownloads {
  readonly byId: ReadonlyMap<string, ResolvedDownload>;
  /** Verified hashes resolved so far in this run. */
  readonly hashes: ReadonlyMap<string, string>;
  readonly cache: DownloadCache | undefined;
  /** Resolves the hashes a task needs (no-op for those already known). */
  readonly resolveFor: (task: Task) => Promise<void>;
}

/** Download ids a task's scripts, uploads or served cache name. */
export function downloadsOf(task: Task, contents: ReadonlyMap<string, Buffer>): string[] {
  const ids = new Set<string>();
  const texts = [
    task.check?.script ?? '',
    task.apply.script,
    ...task.uploads.map((u) => contents.get(u.artifact)?.toString('utf8') ?? ''),
  ];
  for (const text of texts) for (const id of sha256Refs(text)) ids.add(id);
  for (const id of task.serves?.downloads ?? []) ids.add(id);
  return [...ids].sort();
}

export async function prepareDownloads(
  plan: Plan,
  contents: ReadonlyMap<string, Buffer>,
  o: DownloadOptions & { readonly dir: string },
  signal: AbortSignal,
  bus: EventBus,
): Promise<RunDownloads> {
  const byId = new Map((plan.downloads ?? []).map((d) => [d.id, d]));
  const hashes = new Map<string, string>();
  if (byId.size === 0) return { byId, hashes, cache: undefined, resolveFor: async () => undefined };
  const cache = await DownloadCache.open({
    dir: o.dir,
    seed: o.seed,
    fetcher: o.fetcher ?? httpFetcher,
    ...(o.fill === undefined ? {} : { fill: o.fill }),
    signal,
    report: (id, action, sha256, bytes) =>
      bus.emit({ type: 'download', id, action, sha256, ...(bytes === undefined ? {} : { bytes }) }),
  });
  const resolveFor = async (task: Task): Promise<void> => {
    for (const id of downloadsOf(task, contents)) {
      const d = byId.get(id);
      // An id the plan does not list is named where it is filled in (fillDownloads).
      if (d !== undefined && !hashes.has(id)) hashes.set(id, await cache.hashOf(d));
    }
  };
  return { byId, hashes, cache, resolveFor };
}
