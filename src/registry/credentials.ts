// Registry credentials: Docker's config.json (`auths.<host>.auth`, base64
// user:password) and `--registry-auth host=user:PASSWORD_FILE`, where the
// password is read from a file so it never shows on a command line or in
// `ps`. Later entries win, so a flag overrides the Docker config.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../errors.js';

export interface Credential {
  readonly username: string;
  readonly password: string;
}

export type Credentials = ReadonlyMap<string, Credential>;

/** `https://index.docker.io/v1/`, `docker.io` and `registry-1.docker.io` are one registry. */
export function normaliseHost(key: string): string {
  const host =
    key
      .replace(/^[a-z]+:\/\//i, '')
      .split('/')[0]
      ?.toLowerCase() ?? '';
  return host === 'index.docker.io' || host === 'docker.io' ? 'registry-1.docker.io' : host;
}

/** The Docker config: $DOCKER_CONFIG/config.json, else ~/.docker/config.json; none is fine. */
export function dockerConfigCredentials(env: Readonly<Record<string, string | undefined>>): Map<string, Credential> {
  const dir = env['DOCKER_CONFIG'] ?? join(env['HOME'] ?? homedir(), '.docker');
  let text: string;
  try {
    text = readFileSync(join(dir, 'config.json'), 'utf8');
  } catch {
    return new Map();
  }
  return parseDockerConfig(text, join(dir, 'config.json'));
}

export function parseDockerConfig(text: string, path: string): Map<string, Credential> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InputError('registry.docker-config', `${path} is not valid JSON`);
  }
  return credentialsOfAuths((parsed as { auths?: unknown } | null)?.auths);
}

/**
 * Docker's `auths` map (config.json, a dockerconfigjson Secret, or a legacy
 * dockercfg Secret, which is that map alone): `auth` (base64 user:password),
 * else `username` and `password` as `kubectl create secret docker-registry`
 * also writes them.
 */
export function credentialsOfAuths(auths: unknown): Map<string, Credential> {
  const out = new Map<string, Credential>();
  if (typeof auths !== 'object' || auths === null) return out;
  for (const [key, entry] of Object.entries(
    auths as Record<string, { auth?: unknown; username?: unknown; password?: unknown } | null>,
  )) {
    const credential =
      typeof entry?.auth === 'string' && entry.auth !== ''
        ? fromAuth(entry.auth)
        : fromFields(entry?.username, entry?.password);
    if (credential !== undefined) out.set(normaliseHost(key), credential);
  }
  return out;
}

function fromAuth(auth: string): Credential | undefined {
  const decoded = Buffer.from(auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon <= 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function fromFields(username: unknown, password: unknown): Credential | undefined {
  return typeof username === 'string' && username !== '' && typeof password === 'string'
    ? { username, password }
    : undefined;
}

/** `host=user:/path/to/password-file`; the file's trailing newline is dropped. */
export function parseRegistryAuthFlag(flag: string, readFile: (path: string) => string): [string, Credential] {
  const eq = flag.indexOf('=');
  const colon = flag.indexOf(':', eq + 1);
  if (eq <= 0 || colon <= eq + 1 || colon === flag.length - 1) {
    throw new InputError('flags.registry-auth', `--registry-auth ${flag}: expected HOST=USER:PASSWORD_FILE`, {
      hint: 'the password is read from the file, never given on the command line',
    });
  }
  const file = flag.slice(colon + 1);
  let password: string;
  try {
    password = readFile(file).replace(/\r?\n$/, '');
  } catch (error) {
    throw new InputError(
      'flags.registry-auth',
      `--registry-auth: cannot read password file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  return [normaliseHost(flag.slice(0, eq)), { username: flag.slice(eq + 1, colon), password }];
}
