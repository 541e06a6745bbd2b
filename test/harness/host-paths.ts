// Test hosts in network namespaces share this machine's filesystem, so the
// paths a driver task makes on a "hypervisor" are made here. A test tracks
// them and, when it ends, removes what did not exist before it started: its
// own cluster's directories whole; shared directories (the image cache) only
// while empty AND while no other live test process has registered them — a
// concurrent test's task checks may need the empty directory to exist.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface TrackedPaths {
  /** Removes what the test made; safe to call twice. */
  readonly cleanup: () => void;
}

/** Where each tracking test process lists the shared directories it uses (one file per tracker). */
const REGISTRY = '/run/kubemix-test-shared-paths';
let trackers = 0;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Shared paths registered by other trackers whose processes still run, each with the `stop` it recorded. */
function usedElsewhere(own: string): Map<string, string> {
  const used = new Map<string, string>();
  for (const name of existsSync(REGISTRY) ? readdirSync(REGISTRY) : []) {
    const file = join(REGISTRY, name);
    if (file === own) continue;
    const pid = Number(name.split('-')[0]);
    if (!alive(pid)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [path, stop] = line.split('\t');
      if (path && stop) used.set(path, stop);
    }
  }
  return used;
}

/** Writes the marker; retried when a finishing test removed the empty registry in between. */
function register(marker: string, shared: readonly { from: string; stop: string }[]): void {
  for (let attempt = 0; ; attempt += 1) {
    mkdirSync(REGISTRY, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(marker, shared.map((s) => `${s.from}\t${s.stop}\n`).join(''));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 5) throw e;
    }
  }
}

/** `own`: this test's directories (removed whole); `shared`: directories other tests may use too. */
export function trackHostPaths(own: readonly string[], shared: readonly string[]): TrackedPaths {
  const firstExisting = (p: string): string => (existsSync(p) ? p : firstExisting(dirname(p)));
  const ownMissing = own.filter((p) => !existsSync(p));
  // A shared directory another live test made counts as made by the tests: keep that test's stop, so the
  // last user removes it even though it existed when this one started.
  const before = usedElsewhere('');
  const sharedChains = shared.map((p) => ({ from: p, stop: before.get(p) ?? firstExisting(p) }));
  const chains = [...own.map((p) => ({ from: p, stop: firstExisting(p) })), ...sharedChains];
  const marker = join(REGISTRY, `${process.pid}-${(trackers += 1)}`);
  register(marker, sharedChains);
  return {
    cleanup: () => {
      for (const p of ownMissing) rmSync(p, { recursive: true, force: true });
      const used = usedElsewhere(marker);
      rmSync(marker, { force: true });
      for (const { from, stop } of chains) removeEmptyUpTo(from, stop, used);
      try {
        rmdirSync(REGISTRY); // only when empty; another test may be registering right now
      } catch {
        // not empty, or gone already
      }
    },
  };
}

/** rmdir `path` and its parents while empty, never `stop` or above it, nor a path another test uses. */
function removeEmptyUpTo(path: string, stop: string, used: ReadonlyMap<string, string>): void {
  for (let p = path; p !== stop && p.startsWith(`${stop}/`); p = dirname(p)) {
    if ([...used.keys()].some((u) => u === p || u.startsWith(`${p}/`))) return;
    try {
      rmdirSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
  }
}
