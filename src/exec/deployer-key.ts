// The deployer's SSH public key, the one the machines kubemix creates
// authorise (cloud-init's ssh_authorized_keys, Windows'
// administrators_authorized_keys): the public half of the key kubemix logs in
// to them with, i.e. the identityFile their connection names (the libvirt
// driver gives guests their hypervisor's), else the ssh-agent's first key.
// Only the public half enters the secret store; the private key is read,
// parsed and dropped here, never stored, logged or journaled.
import ssh2 from 'ssh2';
import { readFile } from 'node:fs/promises';
import { InputError } from '../errors.js';
import { SECRET_NAMES } from '../model/secret-names.js';
import type { HostConnection } from '../model/types.js';
import { expandHome } from '../transport/home-path.js';
import type { SecretStore } from './secrets.js';

const CLUSTER_SSH_PUBLIC_KEY = SECRET_NAMES.clusterSshPublicKey;

const HINT =
  'kubemix logs in to the guests it creates with the identityFile of their hypervisor ' +
  '(spec.infrastructure.hypervisors[].identityFile) and authorises its public half on them: ' +
  'give a readable, unencrypted private key there (or its public key beside it as FILE.pub), ' +
  'or leave identityFile out and load the key into ssh-agent (SSH_AUTH_SOCK)';

/** `type base64` of a parsed key (no comment: the comment may name the deployer's machine). */
function keyLine(key: ssh2.ParsedKey): string {
  return `${key.type} ${key.getPublicSSH().toString('base64')}`;
}

function parsed(data: Buffer): ssh2.ParsedKey | undefined {
  const key = ssh2.utils.parseKey(data);
  return key instanceof Error ? undefined : key;
}

async function readOrRefuse(path: string, what: (code: string) => string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new InputError('ssh.deployer-key', what(code), { path, hint: HINT });
  }
}

/**
 * The public key line of an identity file: derived from the private key, or
 * read from FILE.pub when the private key does not parse (a passphrase).
 */
export async function publicKeyOfIdentity(identityFile: string): Promise<string> {
  const path = expandHome(identityFile);
  const key = parsed(await readOrRefuse(path, (code) => `cannot read the SSH identity file ${path} (${code})`));
  if (key !== undefined) return keyLine(key);
  const unparsed = `the SSH identity file ${path} does not parse (encrypted?)`;
  const pub = parsed(
    await readOrRefuse(`${path}.pub`, (code) => `${unparsed} and ${path}.pub cannot be read (${code})`),
  );
  if (pub !== undefined) return keyLine(pub);
  throw new InputError('ssh.deployer-key', `neither ${path} nor ${path}.pub holds an SSH key kubemix can read`, {
    path,
    hint: HINT,
  });
}

/** The agent's first key (the one ssh offers first), or a clear refusal. */
async function publicKeyOfAgent(socket: string | undefined): Promise<string> {
  const none = (why: string): InputError =>
    new InputError('ssh.deployer-key', `no SSH key for the guests kubemix creates: ${why}`, { hint: HINT });
  if (socket === undefined || socket === '') throw none('no identityFile is set and SSH_AUTH_SOCK is not set');
  const keys = await new Promise<ssh2.ParsedKey[]>((resolve, reject) => {
    new ssh2.OpenSSHAgent(socket).getIdentities((error, found) => {
      if (error) reject(none(`the ssh-agent at ${socket} did not answer (${error.message})`));
      // OpenSSH's agent protocol answers with parsed keys (ssh2 lib/agent.js).
      else resolve((found ?? []).filter((k): k is ssh2.ParsedKey => 'getPublicSSH' in k));
    });
  });
  const first = keys[0];
  if (first === undefined) throw none(`the ssh-agent at ${socket} holds no key`);
  return keyLine(first);
}

/**
 * Puts the deployer's public key into the store when the run needs it and
 * neither the store knows it nor a task captures it (like generated secrets:
 * the guests' seeds took the stored key on their first boot, so a later run
 * keeps it). Returns the names stored.
 */
export async function ensureDeployerKey(
  store: SecretStore,
  hosts: readonly HostConnection[],
  wanted: ReadonlySet<string>,
  captured: ReadonlySet<string>,
  agent: string | undefined,
): Promise<string[]> {
  const known = store.has(CLUSTER_SSH_PUBLIC_KEY) || captured.has(CLUSTER_SSH_PUBLIC_KEY);
  if (known || !wanted.has(CLUSTER_SSH_PUBLIC_KEY)) return [];
  const created = hosts.filter((h) => h.provisioner === 'kubemix');
  const file = created.find((h) => h.identityFile !== undefined)?.identityFile;
  const line = file === undefined ? await publicKeyOfAgent(agent) : await publicKeyOfIdentity(file);
  await store.set(CLUSTER_SSH_PUBLIC_KEY, { value: line, source: 'read' });
  return [CLUSTER_SSH_PUBLIC_KEY];
}
