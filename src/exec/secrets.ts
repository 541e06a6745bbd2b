// The secret store: one 0600 JSON file in the state directory. Values are
// generated here (kubeadm join token, certificate key, passwords) or captured
// from a host at run time (Task.captures). Plans and journals only ever hold
// secret *names*; `{{secret:NAME}}` is filled in just before a script goes on
// stdin or a file is uploaded 0600.
import {
  CLUSTER_CA_SECRETS,
  SECRET_NAMES,
  parseServingTlsSecret,
  servingTlsSecrets,
  sshHostKeyBase64Secret,
  sshHostKeySecret,
  sshHostPublicKeySecret,
} from '../model/secret-names.js';
import { SERVICES } from '../matrix/index.js';
import { issueServingTls, servingTlsDue } from './serving-tls.js';
import { generateClusterCa } from './cluster-ca.js';
import { randomBytes, randomInt } from 'node:crypto';
import { z } from 'zod';
import { readStateJson } from './state-file.js';
import { HostError } from '../errors.js';
import { writeFileDurable } from './durable.js';
import { ed25519KeyPair } from './ed25519.js';
import { knownSecrets, redactSecrets, type KnownSecrets } from '../util/redact.js';
import { URL_SECRET_PREFIX } from '../model/url-credentials.js';

export interface SecretRecord {
  readonly value: string;
  /** Made here, captured from a host, or read from the deployer's files (deployer-key.ts). */
  readonly source: 'generated' | 'captured' | 'read';
  /** Task id that captured it. */
  readonly from?: string;
  readonly at: string;
}

/** secrets.json: name → record, as `save` writes it. */
const SECRETS_SCHEMA = z.record(
  z.string(),
  z.object({
    value: z.string(),
    source: z.enum(['generated', 'captured', 'read']),
    from: z.string().optional(),
    at: z.string(),
  }),
);

const REF = /\{\{secret:([A-Za-z0-9_.-]+)\}\}/g;
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/**
 * Generates a value by name: `kubeadm-token` / `*join-token` → kubeadm bootstrap
 * token (`[a-z0-9]{6}.[a-z0-9]{16}`), `*certificate-key` → 64 hex (32 bytes,
 * kubeadm upload-certs), `*password` → 32 characters. Anything else (a CA
 * hash, an API token) only a task can produce: undefined, so a task that
 * needs it before it is captured fails as "not known yet" instead of running
 * with a made-up value.
 */
export function generateSecret(name: string): string | undefined {
  if (name === SECRET_NAMES.kubeadmToken || /join-token$/.test(name))
    return `${randomString(ALNUM, 6)}.${randomString(ALNUM, 16)}`;
  if (/certificate-key$/.test(name)) return randomBytes(32).toString('hex');
  if (/password$/.test(name)) return randomString(`${ALNUM}ABCDEFGHIJKLMNOPQRSTUVWXYZ`, 32);
  return undefined;
}

export function secretRefs(text: string): string[] {
  return [...text.matchAll(REF)].map((m) => m[1] ?? '');
}

export class MissingSecretError extends HostError {
  constructor(name: string, where: string) {
    super('secret.missing', `${where}: secret ${name} is not known yet`, {
      path: where,
      hint: 'the task that captures it must run first (list it in `after`)',
    });
  }
}

export class SecretStore {
  private records = new Map<string, SecretRecord>();
  /** Values `provide` removed from the store; still redacted until the process ends. */
  private readonly forgotten: [string, string][] = [];
  /** Counts the store's changes (every change is saved), so a Redactor knows when to look at the values again. */
  generation = 0;

  private constructor(readonly path: string) {}

  static async open(path: string): Promise<SecretStore> {
    const store = new SecretStore(path);
    const doc = readStateJson({
      path,
      schema: SECRETS_SCHEMA,
      code: 'state.secrets',
      hint: 'restore secrets.json from a backup of the state directory; without it kubemix cannot reach or join the cluster it deployed (its CA, tokens, admin kubeconfig)',
    });
    for (const [k, v] of Object.entries(doc ?? {})) store.records.set(k, v as SecretRecord);
    return store;
  }

  has(name: string): boolean {
    return this.records.has(name);
  }

  get(name: string): string | undefined {
    return this.records.get(name)?.value;
  }

  /** Every known value, longest first (so a redactor replaces overlapping values whole). */
  values(): [string, string][] {
    return [...this.records].map(([k, r]): [string, string] => [k, r.value]).sort((a, b) => b[1].length - a[1].length);
  }

  /** What a redactor removes: every known value, and those forgotten in this process (a host may still echo one). */
  redactable(): [string, string][] {
    return [...this.values(), ...this.forgotten];
  }

  async set(name: string, record: Omit<SecretRecord, 'at'>): Promise<void> {
    this.records.set(name, { ...record, at: new Date().toISOString() });
    await this.save();
  }

  /**
   * Values the user gave: every credential split off the spec's URLs. A new or
   * changed one is recorded as `read`; one the spec no longer gives (its URL
   * lost its `user:password@`, or is gone) is forgotten, not kept in the store
   * for good. Saved only when `save` (not --check).
   */
  async provide(values: Readonly<Record<string, string>>, save: boolean): Promise<void> {
    let changed = false;
    for (const [name, value] of Object.entries(values)) {
      if (this.get(name) === value) continue;
      this.records.set(name, { value, source: 'read', at: new Date().toISOString() });
      changed = true;
    }
    for (const [name, record] of [...this.records]) {
      if (!name.startsWith(URL_SECRET_PREFIX) || Object.hasOwn(values, name)) continue;
      this.records.delete(name);
      this.forgotten.push([name, record.value]);
      changed = true;
    }
    if (!changed) return;
    if (save) await this.save();
    else this.generation++;
  }

  /**
   * A random 32-byte key (hex) kept with the secrets, made on first use and
   * never changed (secret-inputs.ts keys the journal's digests with it);
   * saved only when `save` (not --check).
   */
  async ensureKey(name: string, save: boolean): Promise<string> {
    const known = this.get(name);
    if (known !== undefined) return known;
    const value = randomBytes(32).toString('hex');
    this.records.set(name, { value, source: 'generated', at: new Date().toISOString() });
    if (save) await this.save();
    else this.generation++;
    return value;
  }

  /** Generates every named secret that is neither known nor captured by a task. */
  async ensureGenerated(names: Iterable<string>, captured: ReadonlySet<string>): Promise<string[]> {
    const made: string[] = [];
    const wanted = [...names];
    const serving = wanted.some((n) => parseServingTlsSecret(n) !== undefined);
    if (
      (serving || wanted.some((n) => (CLUSTER_CA_SECRETS as readonly string[]).includes(n))) &&
      !CLUSTER_CA_SECRETS.some((n) => this.records.has(n) || captured.has(n))
    ) {
      const ca = generateClusterCa();
      const at = new Date().toISOString();
      const [cert, key, hash] = CLUSTER_CA_SECRETS;
      this.records.set(cert, { value: ca.cert, source: 'generated', at });
      this.records.set(key, { value: ca.key, source: 'generated', at });
      this.records.set(hash, { value: ca.hash, source: 'generated', at });
      made.push(...CLUSTER_CA_SECRETS);
    }
    made.push(...this.ensureServingTls(wanted));
    made.push(...this.ensureHostKeys(wanted, captured));
    // The registry's Basic credential is derived from its password: the password comes first.
    const derived = wanted.includes(SECRET_NAMES.registryBasicAuth);
    const order = derived ? [SECRET_NAMES.registryPassword, ...wanted] : wanted;
    for (const name of order) {
      const value =
        this.records.has(name) || captured.has(name) || made.includes(name) ? undefined : generateSecret(name);
      if (value === undefined) continue;
      this.records.set(name, { value, source: 'generated', at: new Date().toISOString() });
      made.push(name);
    }
    if (derived && this.deriveRegistryBasicAuth()) made.push(SECRET_NAMES.registryBasicAuth);
    if (made.length > 0) await this.save();
    return made;
  }

  /** `registry-basic-auth` = base64(`kubemix:<registry-password>`), kept equal to the password; true when (re)made. */
  private deriveRegistryBasicAuth(): boolean {
    const password = this.get(SECRET_NAMES.registryPassword);
    if (password === undefined) return false;
    const value = Buffer.from(`${SERVICES.registryUser}:${password}`).toString('base64');
    if (this.get(SECRET_NAMES.registryBasicAuth) === value) return false;
    this.records.set(SECRET_NAMES.registryBasicAuth, { value, source: 'generated', at: new Date().toISOString() });
    return true;
  }

  /**
   * A VM's SSH host key, generated here as a set: the OpenSSH private key,
   * the same as one base64 line (for YAML seeds) and its public half (pinned
   * in known_hosts before first contact). One name of the set asks for all.
   */
  private ensureHostKeys(wanted: readonly string[], captured: ReadonlySet<string>): string[] {
    const made: string[] = [];
    for (const name of wanted) {
      const m = /^ssh-host-key-(.+?)(-base64|-public)?$/.exec(name);
      if (m === null) continue;
      const node = m[1] ?? '';
      const set = [sshHostKeySecret(node), sshHostKeyBase64Secret(node), sshHostPublicKeySecret(node)] as const;
      if (made.includes(set[0]) || set.some((n) => this.records.has(n) || captured.has(n))) continue;
      const pair = ed25519KeyPair({ comment: `kubemix ${node}` });
      const at = new Date().toISOString();
      this.records.set(set[0], { value: pair.private, source: 'generated', at });
      this.records.set(set[1], { value: Buffer.from(pair.private).toString('base64'), source: 'generated', at });
      this.records.set(set[2], { value: pair.public, source: 'generated', at });
      made.push(...set);
    }
    return made;
  }

  /**
   * Serving certificates named by the plan (`serving-cert_<dns>_<ip>`), issued
   * here from the cluster CA with their key, as a pair; again when due for renewal.
   */
  private ensureServingTls(wanted: readonly string[]): string[] {
    const made: string[] = [];
    for (const name of wanted) {
      const parsed = parseServingTlsSecret(name);
      if (parsed === undefined) continue;
      const pair = servingTlsSecrets(parsed.dnsName, parsed.ip);
      if (made.includes(pair.cert)) continue;
      const cert = this.get(pair.cert);
      if (cert !== undefined && this.has(pair.key) && !servingTlsDue(cert)) continue;
      const caCert = this.get(SECRET_NAMES.clusterCaCert);
      const caKey = this.get(SECRET_NAMES.clusterCaKey);
      if (caCert === undefined || caKey === undefined) {
        throw new HostError(
          'secret.no-ca',
          `cannot issue the certificate for ${parsed.dnsName}: the secret store holds no cluster CA key`,
          { hint: 'the cluster CA is created by kubemix up; a store without its key cannot sign' },
        );
      }
      const tls = issueServingTls(caCert, caKey, parsed.dnsName, parsed.ip, SERVICES.registryCertDays);
      const at = new Date().toISOString();
      this.records.set(pair.cert, { value: tls.cert, source: 'generated', at });
      this.records.set(pair.key, { value: tls.key, source: 'generated', at });
      made.push(pair.cert, pair.key);
    }
    return made;
  }

  /** Replaces `{{secret:NAME}}`; throws MissingSecretError naming `where`. */
  fill(text: string, where: string): string {
    return text.replace(REF, (_m, name: string) => {
      const value = this.get(name);
      if (value === undefined) throw new MissingSecretError(name, where);
      return value;
    });
  }

  private async save(): Promise<void> {
    this.generation++;
    await writeFileDurable(this.path, `${JSON.stringify(Object.fromEntries(this.records), null, 2)}\n`, 0o600);
  }
}

/**
 * Removes every known secret value (in each form it takes: as it is, base64,
 * URL-encoded) and every secret shape (util/redact.ts) from text bound for
 * logs, events or the journal. The forms are worked out again only when the
 * store has changed.
 */
export class Redactor {
  private known: KnownSecrets = knownSecrets([]);
  private seen = -1;

  constructor(private readonly store: SecretStore) {}

  redact(text: string): string {
    if (this.store.generation !== this.seen) {
      this.known = knownSecrets(this.store.redactable());
      this.seen = this.store.generation;
    }
    return redactSecrets(text, this.known);
  }
}
