// Hashes the executor keys its journal on. Canonical JSON = keys sorted at
// every level, no whitespace; the plan hash is sha256 of the canonical plan
// without its `hash` field (the contract in plan/types.ts).
import { createHash } from 'node:crypto';
import type { Artifact, Plan, Task } from '../plan/types.js';

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function planHash(plan: Omit<Plan, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...body } = plan;
  return sha256(canonicalJson(body));
}

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
