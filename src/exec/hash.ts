// Hashes the executor keys its journal on. Canonical JSON = keys sorted at
// every level, no whitespace. The plan hash is sha256 of plan.json's body as
// written, without its `hash` line (the contract in plan/hash.ts).
import { canonicalJson, sha256Hex } from '../util/json.js';
import { sha256Refs, type ResolvedDownload } from '../model/downloads.js';
import type { Artifact, Task } from '../plan/types.js';

export { planFileHash, planHash } from '../plan/hash.js';
export { canonicalJson };
export const sha256 = sha256Hex;

/**
 * The downloads a task names or serves, as the plan resolves them (source and
 * hash): a new release or pin re-runs the task even though its text, which
 * only says `{{sha256:ID}}`, stays the same.
 */
function downloadInputs(task: Task, downloads: ReadonlyMap<string, ResolvedDownload>): unknown[] {
  const ids = new Set(sha256Refs(`${task.check?.script ?? ''}\n${task.apply.script}`));
  for (const id of task.serves?.downloads ?? []) ids.add(id);
  return [...ids].sort().map((id) => downloads.get(id) ?? id);
}

/**
 * What a task's outcome depends on: its commands, the content (sha256) and
 * placement of what it uploads, the *names* of its secrets, and for the
 * secrets the user gives (a URL's password) a keyed digest of the value
 * (`userSecrets`, exec/secret-inputs.ts): a rotated password re-runs the
 * tasks that write it onto nodes. Description, timeout and ordering are left
 * out: changing them does not re-run a task. A task using no user secret
 * hashes as before, so its journal entry stays valid.
 */
export function taskInputHash(
  task: Task,
  artifacts: ReadonlyMap<string, Artifact>,
  downloads: ReadonlyMap<string, ResolvedDownload> = new Map(),
  userSecrets: Readonly<Record<string, string>> = {},
): string {
  const uploads = task.uploads.map((u) => {
    const a = artifacts.get(u.artifact);
    return { artifact: u.artifact, sha256: a?.sha256, remotePath: a?.remotePath, mode: a?.mode, owner: a?.owner };
  });
  const inputs = downloadInputs(task, downloads);
  return sha256(
    canonicalJson({
      id: task.id,
      host: task.host,
      check: task.check,
      apply: task.apply,
      uploads,
      secrets: [...task.secrets].sort(),
      captures: task.captures ?? [],
      ...(inputs.length === 0 ? {} : { downloads: inputs, serves: task.serves?.dir ?? null }),
      ...(Object.keys(userSecrets).length === 0 ? {} : { userSecrets }),
    }),
  );
}
