// The key the libvirt guests authorise (secret cluster-ssh-public-key) comes
// from the deployer: the public half of the hypervisor's identityFile, which
// kubemix also logs in to the guests with. The guest tasks' secret references
// resolve without the test supplying the key; a missing key file stops
// `kubemix up` with exit 2 naming the file, before any host is contacted; the
// private key never reaches the secret store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { ed25519KeyPair } from '../src/exec/ed25519.js';
import { parse, stringify } from 'yaml';
import { InputError } from '../src/errors.js';
import { ensureDeployerKey, publicKeyOfIdentity } from '../src/exec/deployer-key.js';
import { SecretStore, secretRefs } from '../src/exec/secrets.js';
import { CLUSTER_SSH_PUBLIC_KEY } from '../src/drivers/secret-names.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { runCli } from './helpers/cli.js';
import { REPO, scratch } from './helpers/shapes.js';

/** examples/k8s-libvirt-1-1-1.yaml with the hypervisor's identityFile set, written to `dir`. */
function specWithKey(dir: string, identityFile: string): string {
  const doc = parse(readFileSync(join(REPO, 'examples', 'k8s-libvirt-1-1-1.yaml'), 'utf8')) as {
    spec: { infrastructure: { hypervisors: Record<string, unknown>[] } };
  };
  for (const h of doc.spec.infrastructure.hypervisors) h['identityFile'] = identityFile;
  const path = join(dir, 'cluster.yaml');
  writeFileSync(path, stringify(doc));
  return path;
}

function keyPair(dir: string, passphrase?: string): { file: string; public: string; private: string } {
  const pair = ed25519KeyPair(passphrase === undefined ? { comment: 'me@desk' } : { comment: 'me@desk', passphrase });
  const file = join(dir, 'id_ed25519');
  writeFileSync(file, pair.private, { mode: 0o600 });
  writeFileSync(`${file}.pub`, `${pair.public}\n`);
  return { file, public: pair.public.split(' ').slice(0, 2).join(' '), private: pair.private };
}

describe('the deployer key libvirt guests authorise', () => {
  it('comes from the hypervisor identityFile and fills the guest seeds', async () => {
    const { dir, remove } = scratch('deployer-key');
    try {
      const key = keyPair(dir);
      const path = specWithKey(dir, key.file);
      const assembled = assemblePlan(resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') })));
      const { plan, files } = assembled;
      const guests = plan.hosts.filter((h) => h.provisioner === 'kubemix');
      assert.ok(guests.length > 0);
      for (const g of guests) assert.equal(g.identityFile, key.file, `${g.name} is reached with the deployer's key`);
      const guestTasks = plan.tasks.filter((t) => t.secrets.includes(CLUSTER_SSH_PUBLIC_KEY));
      assert.ok(guestTasks.length > 0, 'the Linux guest tasks name the key');
      const seeds = files.filter((f) => secretRefs(f.content).includes(CLUSTER_SSH_PUBLIC_KEY));
      assert.ok(seeds.length > 0, 'seeds refer to the key');

      const store = await SecretStore.open(join(dir, 'secrets.json'));
      const wanted = new Set([...guestTasks.flatMap((t) => t.secrets), ...seeds.flatMap((f) => secretRefs(f.content))]);
      assert.deepEqual(await ensureDeployerKey(store, plan.hosts, wanted, new Set(), undefined), [
        CLUSTER_SSH_PUBLIC_KEY,
      ]);
      await store.ensureGenerated(wanted, new Set());
      for (const s of seeds) assert.ok(store.fill(s.content, s.remotePath).includes(key.public), s.remotePath);
      assert.deepEqual(await ensureDeployerKey(store, plan.hosts, wanted, new Set(), undefined), [], 'known: kept');
      const stored = readFileSync(join(dir, 'secrets.json'), 'utf8');
      // Lines past the first of the base64 body hold key material (the first is the shared format header).
      const body = key.private.split('\n').slice(2, -2);
      assert.ok(body.length > 0 && body.every((l) => !stored.includes(l)), 'no private key in the store');
      assert.ok(!stored.includes('me@desk'), 'the comment stays on the deployer machine');
    } finally {
      remove();
    }
  });

  it('reads FILE.pub beside a passphrase-protected key; refuses clearly when nothing is readable', async () => {
    const { dir, remove } = scratch('deployer-key');
    try {
      const key = keyPair(dir, 'secret phrase');
      assert.equal(await publicKeyOfIdentity(key.file), key.public);
      const missing = join(dir, 'absent_key');
      await assert.rejects(
        publicKeyOfIdentity(missing),
        (e: unknown) => e instanceof InputError && e.exit === 2 && e.message.includes(`${missing} (ENOENT)`),
      );
      writeFileSync(join(dir, 'junk'), 'not a key\n');
      await assert.rejects(
        publicKeyOfIdentity(join(dir, 'junk')),
        (e: unknown) => e instanceof InputError && e.message.includes(`${join(dir, 'junk')}.pub cannot be read`),
      );
      const store = await SecretStore.open(join(dir, 'secrets.json'));
      const agentless = [
        { name: 'g', address: '10.0.0.2', port: 22, user: 'root', shell: 'sh', provisioner: 'kubemix' },
      ];
      await assert.rejects(
        ensureDeployerKey(store, agentless as never, new Set([CLUSTER_SSH_PUBLIC_KEY]), new Set(), undefined),
        (e: unknown) => e instanceof InputError && /SSH_AUTH_SOCK is not set/.test(e.message),
      );
    } finally {
      remove();
    }
  });

  it('without identityFile: the first key of the ssh-agent', { skip: !existsSync('/usr/bin/ssh-agent') }, async () => {
    const { dir, remove } = scratch('deployer-key');
    const socket = join(dir, 'agent.sock');
    const agent = spawn('/usr/bin/ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 50 && !existsSync(socket); i++) await sleep(100);
      const key = keyPair(dir);
      const add = spawnSync('/usr/bin/ssh-add', [key.file], { env: { SSH_AUTH_SOCK: socket }, encoding: 'utf8' });
      assert.equal(add.status, 0, add.stderr);
      const store = await SecretStore.open(join(dir, 'secrets.json'));
      const guest = { name: 'g', address: '10.0.0.2', port: 22, user: 'root', shell: 'sh', provisioner: 'kubemix' };
      const wanted = new Set([CLUSTER_SSH_PUBLIC_KEY]);
      assert.deepEqual(await ensureDeployerKey(store, [guest] as never, wanted, new Set(), socket), [
        CLUSTER_SSH_PUBLIC_KEY,
      ]);
      assert.equal(store.get(CLUSTER_SSH_PUBLIC_KEY), key.public);
    } finally {
      if (agent.pid !== undefined) process.kill(agent.pid);
      remove();
    }
  });

  it('kubemix up with a missing key file exits 2 naming it, before contacting a host, without a stack trace', async () => {
    const { dir, remove } = scratch('deployer-key');
    try {
      const missing = join(dir, 'no_such_key');
      const spec = specWithKey(dir, missing);
      const r = await runCli(['up', spec, '--state-dir', join(dir, 'state')], { env: {} });
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.includes(`cannot read the SSH identity file ${missing} (ENOENT)`), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
    } finally {
      remove();
    }
  });
});
