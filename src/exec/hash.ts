// Hashes the executor keys its journal on. Canonical JSON = keys sorted at
// every level, no whitespace; the plan hash is sha256 of the canonical plan
// without its `hash` field (the contract in plan/types.ts).
import { canonicalJson, sha256Hex } from '../util/json.js';
import type { Artifact, Task } from '../plan/types.js';

export { planHash } from '../plan/hash.js';
export { canonicalJson };
export const sha256 = sha256Hex;

/**
 * What a task's outcome depends on: its commands, the content (sha256) and
 * placement of what it uploads, and the *names* of its secrets. Description,
 * timeout and ordering are left out: changing them does not re-run a task.
 */
export function taskInputHash(task: Task, artifacts: ReadonlyMap<string, Artifact>): string {
  const uploads = task.uploads.map((u) => {
    const a = artifacts.get(u.artifact);
    return { artifact: u.artifact, sha256: a?.sha256, remotePath: a?.remotePath, mode: a?.mode, owner: a?.owner };
  });
  return sha256(canonicalJson({ id: task.id, host: task.host, check: task.check, apply: task.apply, uploads, secrets: [...task.secrets].sort(), captures: task.captures ?? [] }));
}
