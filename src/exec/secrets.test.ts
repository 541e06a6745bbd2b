import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingSecretError, Redactor, SecretStore, generateSecret, secretRefs } from './secrets.js';

/** Scratch directories, removed when the file's tests end. */
const scratchDirs: string[] = [];
const scratch = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratchDirs.push(dir);
  return dir;
};
after(() => scratchDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('secret store', () => {
  it('generates values in the formats kubeadm expects', () => {
    assert.match(generateSecret('join-token') ?? '', /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.match(generateSecret('cluster-certificate-key') ?? '', /^[0-9a-f]{64}$/);
    assert.match(generateSecret('registry-password') ?? '', /^[A-Za-z0-9]{32}$/);
    assert.notEqual(generateSecret('x-password'), generateSecret('x-password'));
    assert.equal(generateSecret('ca-cert-hash'), undefined, 'only tasks produce values that are not random');
  });

  it('fills references, refuses unknown ones, persists 0600 and redacts', async () => {
    const path = join(scratch('sec-'), 'secrets.json');
    const store = await SecretStore.open(path);
    assert.deepEqual(await store.ensureGenerated(['a-password', 'ca-hash'], new Set(['ca-hash'])), ['a-password']);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const value = store.get('a-password') ?? '';
    assert.equal(store.fill('p={{secret:a-password}}', 't'), `p=${value}`);
    assert.throws(
      () => store.fill('{{secret:ca-hash}}', 'task-x apply'),
      (e: unknown) => e instanceof MissingSecretError && /task-x apply/.test(e.message),
    );
    await store.set('ca-hash', { value: 'sha256:abcdef0123', source: 'captured', from: 't' });
    const reopened = await SecretStore.open(path);
    assert.equal(reopened.get('ca-hash'), 'sha256:abcdef0123');
    const r = new Redactor(reopened);
    assert.equal(r.redact(`x ${value} y sha256:abcdef0123`), 'x <redacted:a-password> y <redacted:ca-hash>');
    assert.deepEqual(secretRefs('{{secret:a}} {{secret:b.c-d}} {{secret:}}'), ['a', 'b.c-d']);
  });
});

describe('VM host keys', () => {
  it('one name asks for the set: private key, its base64 line and its public half, which belong together', async () => {
    const path = join(scratch('kubemix-hostkey-'), 'secrets.json');
    const store = await SecretStore.open(path);
    const made = await store.ensureGenerated(['ssh-host-key-compute-01-base64'], new Set());
    assert.deepEqual(made.sort(), [
      'ssh-host-key-compute-01',
      'ssh-host-key-compute-01-base64',
      'ssh-host-key-compute-01-public',
    ]);
    const key = store.get('ssh-host-key-compute-01') ?? '';
    assert.match(key, /^-----BEGIN OPENSSH PRIVATE KEY-----/);
    assert.equal(Buffer.from(store.get('ssh-host-key-compute-01-base64') ?? '', 'base64').toString(), key);
    assert.match(store.get('ssh-host-key-compute-01-public') ?? '', /^ssh-ed25519 AAAA/);
    // The public half is the private key's: ssh-keygen -y derives it back.
    const { execFileSync } = await import('node:child_process');
    const { writeFileSync } = await import('node:fs');
    const file = join(scratch('kubemix-hostkey-'), 'key');
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    const derived = execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).split(' ').slice(0, 2);
    assert.deepEqual(derived, (store.get('ssh-host-key-compute-01-public') ?? '').split(' ').slice(0, 2));
    assert.deepEqual(await store.ensureGenerated(['ssh-host-key-compute-01-public'], new Set()), []);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });
});
