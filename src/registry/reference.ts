// Image references as registries need them: host, repository and tag or
// digest with their case kept (tags are case-sensitive on the wire, unlike
// the lowercased form lint's heuristics compare), Docker Hub's defaults, and
// the cluster's mirrors applied.
import { RegistryError } from './errors.js';

export interface RegistryRef {
  /** Host (and port) to talk to: `registry-1.docker.io` for Docker Hub. */
  readonly host: string;
  readonly repository: string;
  /** A tag or a `sha256:` digest. */
  readonly reference: string;
}

const DOCKER_HUB = 'registry-1.docker.io';

export function parseRegistryRef(image: string): RegistryRef {
  let rest = image.trim();
  let reference: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    // A digest wins over a tag (`name:tag@sha256:…` pulls the digest).
    reference ??= rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  const first = parts[0] ?? '';
  const hasHost = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let host = hasHost ? first.toLowerCase() : 'docker.io';
  let repository = (hasHost ? parts.slice(1) : parts).join('/');
  if (host === 'docker.io' || host === 'index.docker.io') {
    host = DOCKER_HUB;
    if (!repository.includes('/')) repository = `library/${repository}`;
  }
  if (repository === '' || !/^[a-z0-9]+(?:[._/-][a-z0-9]+|__)*$/.test(repository.replace(/__/g, '_'))) {
    throw new RegistryError('registry.bad-reference', `${image}: not a valid image reference`);
  }
  return { host, repository, reference: reference ?? 'latest' };
}

export function isDigest(reference: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(reference);
}

export function formatRef(ref: RegistryRef): string {
  return `${ref.host}/${ref.repository}${isDigest(ref.reference) ? '@' : ':'}${ref.reference}`;
}

/**
 * Mirrors as the cluster spec writes them (`registry.k8s.io: mirror.example.com/k8s`):
 * the mirror host, with its path as a prefix of the repository. Keys name the
 * upstream registry; `docker.io` matches Docker Hub.
 */
export function applyMirror(ref: RegistryRef, mirrors: Readonly<Record<string, string>>): RegistryRef {
  const key = ref.host === DOCKER_HUB ? (mirrors['docker.io'] === undefined ? DOCKER_HUB : 'docker.io') : ref.host;
  const mirror = mirrors[key];
  if (mirror === undefined) return ref;
  const [host = '', ...prefix] = mirror
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '')
    .split('/');
  const repository = prefix.length === 0 ? ref.repository : `${prefix.join('/')}/${ref.repository}`;
  return { host: host.toLowerCase(), repository, reference: ref.reference };
}
