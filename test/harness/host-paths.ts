// Test hosts in network namespaces share this machine's filesystem, so the
// paths a driver task makes on a "hypervisor" are made here. A test tracks
// them and, when it ends, removes what did not exist before it started: its
// own cluster's directories whole, shared parents only while empty (another
// test may be using them at the same time).
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';

export interface TrackedPaths {
  /** Removes what the test made; safe to call twice. */
  readonly cleanup: () => void;
}

/** `own`: this test's directories (removed whole); `shared`: directories other tests may use too. */
export function trackHostPaths(own: readonly string[], shared: readonly string[]): TrackedPaths {
  const firstExisting = (p: string): string => (existsSync(p) ? p : firstExisting(dirname(p)));
  const ownMissing = own.filter((p) => !existsSync(p));
  const chains = [...own, ...shared].map((p) => ({ from: p, stop: firstExisting(p) }));
  return {
    cleanup: () => {
      for (const p of ownMissing) rmSync(p, { recursive: true, force: true });
      for (const { from, stop } of chains) removeEmptyUpTo(from, stop);
    },
  };
}

/** rmdir `path` and its parents while empty, never `stop` or above it. */
function removeEmptyUpTo(path: string, stop: string): void {
  for (let p = path; p !== stop && p.startsWith(`${stop}/`); p = dirname(p)) {
    try {
      rmdirSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
  }
}
