// Host keys of the machines kubemix creates are generated in the secret store
// (the guest's seed installs the private half) and pinned here, in the
// cluster's known_hosts, before first contact: the transport then accepts that
// key and no other (pinned hosts are never learnt on first contact).
import { shellQuote } from '../util/escape/index.js';
import { sshHostPublicKeySecret } from '../model/secret-names.js';
import type { HostConnection } from '../model/types.js';
import { readFile } from 'node:fs/promises';
import { hostKeyName, parseKnownHosts, type KnownHostsFile } from '../transport/known-hosts.js';
import { writeFileDurable } from './durable.js';
import { HostError } from '../errors.js';
import type { SecretStore } from './secrets.js';

/** The key blob of an OpenSSH public key line (`ssh-ed25519 AAAA… comment`). */
export function publicKeyBlob(line: string, where: string): Buffer {
  const [type, base64] = line.trim().split(/\s+/);
  const blob = Buffer.from(base64 ?? '', 'base64');
  if (type === undefined || blob.length === 0 || !/^ssh-|^ecdsa-/.test(type)) {
    throw new HostError('hostkey.pin-malformed', `${where}: the stored public host key is not an OpenSSH key line`, {
      path: where,
      hint: 'remove the ssh-host-key-* secrets of this node from the state directory so they are generated again',
    });
  }
  return blob;
}

/** Names a pinned key is recorded under: the address as ssh names it, and the node name. */
export function pinNames(host: HostConnection): string[] {
  const names = [hostKeyName(host.address, host.port)];
  if (host.name !== host.address) names.push(hostKeyName(host.name, host.port));
  return names;
}

/**
 * Records the pinned public key of every kubemix-created host whose key the
 * store holds. A name already bound to another key is refused (never
 * overwritten): the file and host are named. Returns the names added.
 */
export async function pinHostKeys(
  hosts: readonly HostConnection[],
  secrets: SecretStore,
  knownHosts: KnownHostsFile,
): Promise<string[]> {
  const added: string[] = [];
  for (const host of hosts) {
    if (host.provisioner !== 'kubemix') continue;
    const secret = sshHostPublicKeySecret(host.name);
    const line = secrets.get(secret);
    if (line === undefined) continue;
    const key = publicKeyBlob(line, `secret ${secret}`);
    for (const name of pinNames(host)) {
      const verdict = knownHosts.verify(name, key);
      if (verdict.status === 'ok') continue;
      if (verdict.status === 'unknown') {
        await knownHosts.add(name, key);
        added.push(name);
        continue;
      }
      const known = verdict.status === 'changed' ? `holds ${verdict.known.join(', ')}` : 'marks it @revoked';
      throw new HostError(
        'hostkey.pin-conflict',
        `cannot pin the host key ${verdict.fingerprint} of ${host.name} as ${name}: ${knownHosts.path} ${known}`,
        {
          path: knownHosts.path,
          hint: `if ${name} is really this new machine, remove its old line: ssh-keygen -R ${shellQuote(name)} -f ${shellQuote(knownHosts.path)}`,
        },
      );
    }
  }
  return added;
}

/**
 * `kubemix down` of machines kubemix created: drops the lines this module
 * pinned (a pinned name with the stored key of that host), nothing else —
 * a line the user wrote, another key or another host stays. Returns the names dropped.
 */
export async function unpinHostKeys(
  hosts: readonly HostConnection[],
  secrets: SecretStore,
  path: string,
): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const pinned = new Map<string, Buffer>();
  for (const host of hosts) {
    const line = host.provisioner === 'kubemix' ? secrets.get(sshHostPublicKeySecret(host.name)) : undefined;
    if (line === undefined) continue;
    const key = publicKeyBlob(line, `secret ${sshHostPublicKeySecret(host.name)}`);
    for (const name of pinNames(host)) pinned.set(name, key);
  }
  const dropped: string[] = [];
  const kept = text.split('\n').filter((raw, index, all) => {
    if (index === all.length - 1 && raw === '') return true;
    const [parsed] = parseKnownHosts(raw);
    const name = parsed?.patterns.length === 1 && parsed.marker === undefined ? parsed.patterns[0] : undefined;
    const key = name === undefined ? undefined : pinned.get(name);
    if (parsed === undefined || name === undefined || key === undefined || !key.equals(parsed.key)) return true;
    dropped.push(name);
    return false;
  });
  if (dropped.length > 0) await writeFileDurable(path, kept.join('\n'), 0o600);
  return dropped;
}
