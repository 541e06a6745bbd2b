import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateClusterCa } from './cluster-ca.js';
import { SecretStore } from './secrets.js';

test('the cluster CA is a CA openssl accepts, and its hash is the one kubeadm computes', () => {
  const ca = generateClusterCa();
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-ca-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key, { mode: 0o600 });
    const text = execFileSync('openssl', ['x509', '-in', join(dir, 'ca.crt'), '-noout', '-text'], { encoding: 'utf8' });
    assert.match(text, /Subject: CN ?= ?kubernetes/);
    assert.match(text, /CA:TRUE/);
    assert.match(text, /Certificate Sign/);
    assert.match(
      execFileSync('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), join(dir, 'ca.crt')], { encoding: 'utf8' }),
      /OK/,
    );
    // The key belongs to the certificate.
    const fromCert = execFileSync('openssl', ['x509', '-in', join(dir, 'ca.crt'), '-noout', '-pubkey'], {
      encoding: 'utf8',
    });
    const fromKey = execFileSync('openssl', ['pkey', '-in', join(dir, 'ca.key'), '-pubout'], { encoding: 'utf8' });
    assert.equal(fromKey, fromCert);
    // kubeadm's documented way to compute --discovery-token-ca-cert-hash.
    const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: fromCert });
    const digest = execFileSync('openssl', ['dgst', '-sha256', '-hex'], { input: der, encoding: 'utf8' })
      .trim()
      .split(' ')
      .pop();
    assert.equal(ca.hash, `sha256:${digest}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the secret store creates the CA as a set, once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-ca-store-'));
  try {
    const store = await SecretStore.open(join(dir, 'secrets.json'));
    const made = await store.ensureGenerated(['cluster-ca-cert-hash', 'kubeadm-token'], new Set());
    assert.deepEqual(made.sort(), ['cluster-ca-cert', 'cluster-ca-cert-hash', 'cluster-ca-key', 'kubeadm-token']);
    assert.match(store.get('cluster-ca-cert-hash') ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(await store.ensureGenerated(['cluster-ca-cert', 'cluster-ca-key'], new Set()), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
