// Test hosts in network namespaces share this machine's filesystem, so the
// paths a driver task makes on a "hypervisor" are made here. A test tracks
// them and, when it ends, removes what did not exist before it started: its
// own cluster's directories whole; shared directories (the image cache) and
// the parents of both only while empty AND while no other live test process
// has registered a path at or below them — a concurrent test's task checks
// may need the empty directory to exist. A parent another live test made
// counts as made by the tests, so whichever test ends last removes it.
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

/** Paths registered by other trackers whose processes still run, each with the `stop` it recorded. */
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

/**
 * Where removing `path`'s empty chain stops: its first existing ancestor, unless another live tracker made that
 * ancestor (it lies on that tracker's chain, below its stop) — then that tracker's stop, the highest such.
 */
function stopFor(path: string, used: ReadonlyMap<string, string>): string {
  const firstExisting = (p: string): string => (existsSync(p) ? p : firstExisting(dirname(p)));
  const first = firstExisting(path);
  let stop = first;
  for (const [u, s] of used) {
    const onChain = u === first || u.startsWith(`${first}/`);
    if (onChain && first.startsWith(`${s}/`) && s.length < stop.length) stop = s;
  }
  return stop;
}

/** `own`: this test's directories (removed whole); `shared`: directories other tests may use too. */
export function trackHostPaths(own: readonly string[], shared: readonly string[]): TrackedPaths {
  const ownMissing = own.filter((p) => !existsSync(p));
  const before = usedElsewhere('');
  const chains = [...own, ...shared].map((p) => ({ from: p, stop: stopFor(p, before) }));
  const marker = join(REGISTRY, `${process.pid}-${(trackers += 1)}`);
  register(marker, chains);
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
