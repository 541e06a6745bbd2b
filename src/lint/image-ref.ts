// Splitting an image reference the way container runtimes do, so heuristics
// see `docker.io/library/nginx`, `nginx` and `library/nginx` as one image.

export interface ImageRef {
  /** Registry host, `docker.io` when none is given. */
  readonly registry: string;
  /** Repository path without the registry, `library/` added for Docker Hub official images. */
  readonly repository: string;
  readonly tag: string | undefined;
  readonly digest: string | undefined;
}

export function parseImageRef(image: string): ImageRef {
  let rest = image.trim().toLowerCase();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  const first = parts[0] ?? '';
  const hasRegistry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let registry = hasRegistry ? first : 'docker.io';
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') registry = 'docker.io';
  let repository = (hasRegistry ? parts.slice(1) : parts).join('/');
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, tag, digest };
}
