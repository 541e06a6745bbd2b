// Deterministic fake secret values for traces. Each is unmistakably a test
// value and unique as a substring, so a trace can turn what the host received
// back into `{{secret:NAME}}` and a scan can prove no value leaked anywhere.
import { secretRefs, SecretStore } from '../../src/exec/secrets.js';
import { prepareStateDir } from '../../src/exec/state-dir.js';
import type { Plan } from '../../src/plan/types.js';

export function fakeSecret(name: string): string {
  const value = `FAKE-TEST-VALUE-${name}-END`;
  // A created guest's public host key is pinned in known_hosts by the executor, which parses it:
  // an OpenSSH key line whose key blob is the fake value (public, so the leak scan need not see it).
  return /^ssh-host-key-.+-public$/.test(name) ? `ssh-ed25519 ${Buffer.from(value).toString('base64')}` : value;
}

/** Every secret name the plan uses (declared, or referenced by a script or an artifact), sorted. */
export function planSecretNames(plan: Plan, contents: ReadonlyMap<string, Buffer>): string[] {
  const names = new Set<string>();
  for (const t of plan.tasks) {
    for (const s of [...t.secrets, ...secretRefs(`${t.check?.script ?? ''}\n${t.apply.script}`)]) names.add(s);
    for (const c of t.captures ?? []) names.add(c.name);
  }
  for (const a of plan.artifacts) for (const s of secretRefs(contents.get(a.id)?.toString('utf8') ?? '')) names.add(s);
  return [...names].sort();
}

/** Names a task of the plan captures from its host (the recording target answers those). */
export function capturedNames(plan: Plan): Set<string> {
  return new Set(plan.tasks.flatMap((t) => (t.captures ?? []).map((c) => c.name)));
}

/**
 * Puts a fake value for every non-captured secret into the state directory's
 * store before the run, so the executor fills in known values instead of
 * random ones (it generates only what is missing).
 */
export async function seedSecrets(
  stateDir: string,
  names: readonly string[],
  captured: ReadonlySet<string>,
): Promise<void> {
  const store = await SecretStore.open((await prepareStateDir(stateDir)).secrets);
  for (const name of names)
    if (!captured.has(name)) await store.set(name, { value: fakeSecret(name), source: 'generated' });
}

/** Replaces every fake value in `text` by its `{{secret:NAME}}` reference; returns the text and the names found. */
export function unfill(text: string, names: readonly string[]): { text: string; found: string[] } {
  let out = text;
  const found: string[] = [];
  for (const name of names) {
    const value = fakeSecret(name);
    if (!out.includes(value)) continue;
    found.push(name);
    out = out.split(value).join(`{{secret:${name}}}`);
  }
  return { text: out, found };
}
