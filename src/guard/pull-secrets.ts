// The credentials of an admitted pod's imagePullSecrets, read from its
// namespace through the Kubernetes API (get on secrets only). Reads are kept
// for a short while so a burst of pods from one Deployment asks once; a
// Secret that is missing, of another type or unreadable is logged (name and
// code, never its data) and the lookup goes on without it, as the kubelet
// would. The first Secret the pod lists wins for a host, as in the kubelet.
import type { KubemixError } from '../errors.js';
import type { KubeAccess } from '../kube/config.js';
import { KubeError } from '../kube/errors.js';
import { getSecret } from '../kube/secrets.js';
import { objectsOf } from '../lint/objects.js';
import { sourceFromObject } from '../lint/source.js';
import { templateOf } from '../lint/templates.js';
import { asMap, type JsonMap } from '../lint/values.js';
import type { Credential } from '../registry/credentials.js';
import { credentialsOfPullSecret } from '../registry/pull-secret.js';
import type { ImageResolvers } from '../registry/setup.js';
import type { ImageOsResolver } from '../lint/image-os.js';

export interface PullSecretOptions {
  readonly access: KubeAccess;
  readonly timeoutMs: number;
  /** How long a read Secret (or its absence) is trusted. */
  readonly ttlMs: number;
  readonly warn: (message: string, error: KubemixError) => void;
  readonly now?: () => number;
}

interface Entry {
  readonly at: number;
  readonly credentials: Promise<ReadonlyMap<string, Credential>>;
}

/** Names in `imagePullSecrets` of every pod template in the object, in order, once each. */
export function pullSecretNames(object: JsonMap): string[] {
  const names: string[] = [];
  for (const o of objectsOf(sourceFromObject('<admission>', object))) {
    const refs = templateOf(o)?.spec['imagePullSecrets'];
    for (const ref of Array.isArray(refs) ? refs : []) {
      const name = asMap(ref)?.['name'];
      if (typeof name === 'string' && name !== '' && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

export class PullSecretReader {
  readonly #o: PullSecretOptions;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(options: PullSecretOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** Host → credential from the named Secrets of `namespace`. */
  async credentials(namespace: string, names: readonly string[]): Promise<Map<string, Credential>> {
    const out = new Map<string, Credential>();
    for (const name of names) {
      for (const [host, credential] of await this.#read(namespace, name)) if (!out.has(host)) out.set(host, credential);
    }
    return out;
  }

  #read(namespace: string, name: string): Promise<ReadonlyMap<string, Credential>> {
    const key = `${namespace}/${name}`;
    const now = this.#now();
    const known = this.#entries.get(key);
    if (known !== undefined && now - known.at < this.#o.ttlMs) return known.credentials;
    const credentials = this.#fetch(namespace, name);
    this.#entries.set(key, { at: now, credentials });
    return credentials;
  }

  async #fetch(namespace: string, name: string): Promise<ReadonlyMap<string, Credential>> {
    const what = `imagePullSecret ${namespace}/${name}`;
    try {
      const secret = await getSecret(this.#o.access, namespace, name, this.#o.timeoutMs);
      if (secret === undefined) {
        this.#o.warn(
          `${what} does not exist; looked up without it`,
          new KubeError('kube.secret-missing', `${what} not found`, { status: 404 }),
        );
        return new Map();
      }
      const credentials = credentialsOfPullSecret(secret.type, secret.data);
      if (credentials === undefined) {
        this.#o.warn(
          `${what} is not a readable ${secret.type === '' ? 'pull secret' : secret.type} Secret; looked up without it`,
          new KubeError('kube.secret-type', `${what}: type ${secret.type}`),
        );
        return new Map();
      }
      return credentials;
    } catch (error) {
      const e = error instanceof KubeError ? error : new KubeError('kube.failed', String(error), { cause: error });
      // A failed read is not kept: the next pod asks again.
      this.#entries.delete(`${namespace}/${name}`);
      this.#o.warn(`${what} not read (${e.message}); looked up without it`, e);
      return new Map();
    }
  }
}

/**
 * The webhook's per-object resolver: the pull secrets' credentials, scoped to
 * the namespace, when the pod names some; else the shared chain.
 */
export function pullSecretResolverFor(
  reader: PullSecretReader,
  resolvers: ImageResolvers,
): (namespace: string | undefined, object: JsonMap) => Promise<ImageOsResolver> {
  return async (namespace, object) => {
    const ns = namespace ?? asMap(object['metadata'])?.['namespace'];
    const names = pullSecretNames(object);
    if (typeof ns !== 'string' || ns === '' || names.length === 0) return resolvers.base;
    return resolvers.scoped(ns, await reader.credentials(ns, names));
  };
}
