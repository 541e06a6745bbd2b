// `--insecure-registry HOST[:PORT]`: the registries the user says have no
// TLS, as containerd's and Docker's insecure-registries settings do. Only
// these hosts are spoken to over plain HTTP, and only over plain HTTP: a TLS
// error from any other host stays an error, never a retry in clear.
import { InputError } from '../errors.js';
import { normaliseHost } from './credentials.js';

const HOST_PORT =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/** The host as image references name it (`reg.local:5000`), lowercased; no scheme, path or wildcard. */
export function parseInsecureRegistry(flag: string): string {
  const host = flag.trim().toLowerCase();
  if (!HOST_PORT.test(host)) {
    throw new InputError('flags.insecure-registry', `--insecure-registry ${flag}: expected HOST or HOST:PORT`, {
      hint: 'name the registry as image references do, without http:// or a path, e.g. --insecure-registry registry.lab:5000',
    });
  }
  // docker.io would mean Docker Hub's API host; nobody runs that without TLS, but keep names consistent.
  return normaliseHost(host);
}
