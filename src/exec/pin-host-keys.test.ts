import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KnownHostsFile, fingerprint } from '../transport/known-hosts.js';
import { sshHostKeySecret, sshHostPublicKeySecret } from '../model/secret-names.js';
import type { HostConnection } from '../model/types.js';
import { HostError } from '../errors.js';
import { SecretStore } from './secrets.js';
import { pinHostKeys, publicKeyBlob, unpinHostKeys } from './pin-host-keys.js';

function host(name: string, address: string, provisioner: 'kubemix' | 'user' = 'kubemix'): HostConnection {
  return { name, address, port: 22, user: 'kubemix', shell: 'sh', provisioner };
}

/** Scratch directories of the fixtures, removed when the file's tests end. */
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function fixture(): Promise<{ store: SecretStore; kh: KnownHostsFile; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pin-'));
  made.push(dir);
  const store = await SecretStore.open(join(dir, 'secrets.json'));
  await store.ensureGenerated([sshHostKeySecret('cp1'), sshHostKeySecret('w1')], new Set());
  return { store, kh: await new KnownHostsFile(join(dir, 'known_hosts')).load(), dir };
}

describe('pinning generated host keys', () => {
  it('records the key under the address and the node name, once', async () => {
    const { store, kh } = await fixture();
    const hosts = [host('cp1', '10.0.0.10'), host('w1', '10.0.0.11'), host('ext', '10.0.0.12', 'user')];
    assert.deepEqual(await pinHostKeys(hosts, store, kh), ['10.0.0.10', 'cp1', '10.0.0.11', 'w1']);
    const key = publicKeyBlob(store.get(sshHostPublicKeySecret('cp1')) ?? '', 'x');
    const reread = await new KnownHostsFile(kh.path).load();
    assert.equal(reread.verify('10.0.0.10', key).status, 'ok');
    assert.equal(reread.verify('cp1', key).status, 'ok');
    assert.equal(reread.verify('10.0.0.11', key).status, 'changed', 'each node has its own key');
    assert.deepEqual(await pinHostKeys(hosts, store, reread), [], 'a second run adds nothing');
    assert.equal(readFileSync(kh.path, 'utf8').trim().split('\n').length, 4);
  });

  it('names the port as ssh does off 22', async () => {
    const { store, kh } = await fixture();
    assert.deepEqual(await pinHostKeys([{ ...host('cp1', '10.0.0.10'), port: 2222 }], store, kh), [
      '[10.0.0.10]:2222',
      '[cp1]:2222',
    ]);
  });

  it('refuses to replace another key for the host, naming host and file, and leaves the file alone', async () => {
    const { store, dir } = await fixture();
    const other = publicKeyBlob(store.get(sshHostPublicKeySecret('w1')) ?? '', 'x');
    const path = join(dir, 'known_hosts');
    const before = `10.0.0.10 ssh-ed25519 ${other.toString('base64')}\n`;
    writeFileSync(path, before);
    const kh = await new KnownHostsFile(path).load();
    await assert.rejects(
      pinHostKeys([host('cp1', '10.0.0.10')], store, kh),
      (e: unknown) =>
        e instanceof HostError &&
        e.message.includes('10.0.0.10') &&
        e.message.includes(path) &&
        e.message.includes(fingerprint(other)),
    );
    assert.equal(readFileSync(path, 'utf8'), before);
  });

  it('refuses a stored public key that is not a key line', async () => {
    const { store, kh } = await fixture();
    await store.set(sshHostPublicKeySecret('cp1'), { value: 'garbage', source: 'generated' });
    await assert.rejects(pinHostKeys([host('cp1', '10.0.0.10')], store, kh), /not an OpenSSH key line/);
  });

  it('down drops only the lines it pinned; a second down changes nothing', async () => {
    const { store, kh } = await fixture();
    await pinHostKeys([host('cp1', '10.0.0.10'), host('w1', '10.0.0.11')], store, kh);
    const w1 = publicKeyBlob(store.get(sshHostPublicKeySecret('w1')) ?? '', 'x').toString('base64');
    const foreign = [
      `10.0.0.10,other ssh-ed25519 ${w1}`,
      `10.0.0.99 ssh-ed25519 ${w1}`,
      `@revoked * ssh-ed25519 ${w1}`,
    ];
    writeFileSync(kh.path, `${readFileSync(kh.path, 'utf8')}${foreign.join('\n')}\n`);
    const hosts = [host('cp1', '10.0.0.10'), host('w1', '10.0.0.11')];
    assert.deepEqual(await unpinHostKeys(hosts, store, kh.path), ['10.0.0.10', 'cp1', '10.0.0.11', 'w1']);
    assert.equal(readFileSync(kh.path, 'utf8'), `${foreign.join('\n')}\n`);
    assert.deepEqual(await unpinHostKeys(hosts, store, kh.path), []);
    assert.deepEqual(await unpinHostKeys(hosts, store, `${kh.path}.absent`), []);
  });
});
