// The values of the secrets a user gives (the credentials split off the
// spec's URLs, model/url-credentials.ts) are inputs of the tasks that write
// them onto nodes: a rotated proxy or mirror password must re-run those
// tasks, or the nodes keep the old one while the journal says "done".
// Everything else in the store is generated or captured once and kept, so
// its value never changes a task's inputs (it would make every task outdated).
//
// The journal must not let anyone recover a password, and a password is
// low-entropy: an unsalted SHA-256 of it is brute-forced offline. So a task's
// hash takes HMAC-SHA256(key, name NUL value) with a random key kubemix
// generates once per state directory and keeps in secrets.json (0600).
import { createHmac } from 'node:crypto';
import { URL_SECRET_PREFIX } from '../model/url-credentials.js';
import type { Task } from '../plan/types.js';
import { SecretStore, secretRefs } from './secrets.js';

/** The store's name of the HMAC key (32 random bytes, hex). */
export const INPUT_HASH_KEY = 'input-hash-key';

/** A task → keyed digest of each user-given secret it uses (empty for most tasks). */
export type SecretInputs = (task: Task) => Readonly<Record<string, string>>;

export const NO_SECRET_INPUTS: SecretInputs = () => ({});

/**
 * Stands for a digest that cannot be made yet (no key in the state directory,
 * no value): `up` always has both when it hashes, so a hash made with this
 * never equals a journaled one and the task counts as outdated, as `up` will
 * re-run it.
 */
const UNKNOWN = 'unknown';

/** A secret whose value comes from the user (the spec), not from kubemix. */
export function isUserSecret(name: string): boolean {
  return name.startsWith(URL_SECRET_PREFIX);
}

/** Every secret name a task uses: declared, referenced by its scripts or by the files it uploads. */
export function taskSecretNames(task: Task, uploadRefs: (artifact: string) => readonly string[]): Set<string> {
  const names = new Set(task.secrets);
  for (const s of secretRefs(`${task.check?.script ?? ''}\n${task.apply.script}`)) names.add(s);
  for (const u of task.uploads) for (const s of uploadRefs(u.artifact)) names.add(s);
  return names;
}

/** The secret names each artifact's text refers to, read once per artifact (many tasks share one). */
export function uploadRefsOf(contents: ReadonlyMap<string, Buffer | string>): (artifact: string) => readonly string[] {
  const cache = new Map<string, readonly string[]>();
  return (artifact) => {
    let refs = cache.get(artifact);
    if (refs === undefined) cache.set(artifact, (refs = secretRefs(contents.get(artifact)?.toString() ?? '')));
    return refs;
  };
}

function digest(key: string | undefined, name: string, value: string | undefined): string {
  if (key === undefined || value === undefined) return UNKNOWN;
  return createHmac('sha256', Buffer.from(key, 'hex')).update(`${name}\0${value}`).digest('hex');
}

/** Digests of the user-given secrets each task uses, from their values and the state directory's key. */
export function secretInputs(
  contents: ReadonlyMap<string, Buffer | string>,
  value: (name: string) => string | undefined,
  key: string | undefined,
): SecretInputs {
  const uploadRefs = uploadRefsOf(contents);
  return (task) => {
    const names = [...taskSecretNames(task, uploadRefs)].filter(isUserSecret).sort();
    return Object.fromEntries(names.map((n) => [n, digest(key, n, value(n))]));
  };
}

/**
 * For a run (`up`): the values as the store holds them after the spec's were
 * provided; the key is created on the first run with a user-given secret
 * (kept in memory only under --check, like the values then).
 */
export async function runSecretInputs(
  store: SecretStore,
  contents: ReadonlyMap<string, Buffer>,
  save: boolean,
): Promise<SecretInputs> {
  if (!store.values().some(([name]) => isUserSecret(name))) return NO_SECRET_INPUTS;
  const key = await store.ensureKey(INPUT_HASH_KEY, save);
  return secretInputs(contents, (n) => store.get(n), key);
}

/**
 * For reports (`status`, `add-node`, `verify`) on a spec: the values the
 * spec gives now (what `up SPEC` would store), the key as the state
 * directory keeps it; nothing is written.
 */
export async function specSecretInputs(
  assembled: {
    readonly plan: { readonly artifacts: readonly { readonly id: string }[] };
    readonly files: readonly { readonly content: string }[];
    readonly secrets?: Readonly<Record<string, string>> | undefined;
  },
  secretsPath: string,
): Promise<SecretInputs> {
  const given = assembled.secrets ?? {};
  if (!Object.keys(given).some(isUserSecret)) return NO_SECRET_INPUTS;
  const store = await SecretStore.open(secretsPath);
  // plan.artifacts and files are in the same order (AssembledPlan.files).
  const contents = new Map(assembled.plan.artifacts.map((a, i) => [a.id, assembled.files[i]?.content ?? '']));
  return secretInputs(contents, (n) => given[n] ?? store.get(n), store.get(INPUT_HASH_KEY));
}
