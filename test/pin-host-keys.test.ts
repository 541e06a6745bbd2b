// A guest kubemix creates presents the host key the executor generated; once
// pinned, the transport accepts that key and refuses any other, without
// --trust-new-hosts. Test hosts are sshd in network namespaces this test makes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { SshTransport, DEFAULT_SSH_OPTIONS } from '../src/transport/ssh.js';
import { HostKeyError } from '../src/transport/errors.js';
import { SecretStore } from '../src/exec/secrets.js';
import { pinHostKeys } from '../src/exec/pin-host-keys.js';
import { sshHostKeySecret } from '../src/model/secret-names.js';
import type { HostConnection } from '../src/model/types.js';

const skip = harnessAvailable();

describe('pinned host keys of created machines on real sshd', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  const open: SshTransport[] = [];

  async function run(conn: HostConnection, file: string): Promise<string> {
    const t = new SshTransport(conn, {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts: await new KnownHostsFile(file).load(),
      trustNewHosts: false,
      maxSessions: 1,
    });
    open.push(t);
    return (await t.exec({ shell: 'sh', privilege: 'user', script: 'echo pinned' })).stdout;
  }

  before(async () => {
    net = await TestNet.create(1);
  });
  after(async () => {
    await Promise.all(open.map((t) => t.close()));
    await net?.cleanup();
  });

  it('accepts the generated key and refuses another one', async (t) => {
    const h = net.hosts[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'pin-net-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const store = await SecretStore.open(join(dir, 'secrets.json'));
    await store.ensureGenerated([sshHostKeySecret(h.name)], new Set());
    await net.stopSshd(h);
    writeFileSync(h.hostKeyFile, store.get(sshHostKeySecret(h.name)) ?? '', { mode: 0o600 });
    await net.startSshd(h);
    const conn: HostConnection = { ...net.connection(h), provisioner: 'kubemix' };
    const file = join(dir, 'known_hosts');
    await assert.rejects(run(conn, file), HostKeyError, 'nothing pinned yet: refused');
    assert.deepEqual(await pinHostKeys([conn], store, await new KnownHostsFile(file).load()), [h.address, h.name]);
    assert.equal(await run(conn, file), 'pinned\n');
    await net.stopSshd(h);
    net.newHostKey(h);
    await net.startSshd(h);
    await assert.rejects(run(conn, file), (e: unknown) => e instanceof HostKeyError && /CHANGED/.test(e.message));
  });
});
