import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servingTlsSecrets } from '../model/secret-names.js';
import { generateClusterCa } from './cluster-ca.js';
import { SecretStore } from './secrets.js';
import { issueServingTls, servingTlsDue } from './serving-tls.js';

test('the store issues a serving certificate openssl verifies against the CA, for the name and IP only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-serving-'));
  try {
    const store = await SecretStore.open(join(dir, 'secrets.json'));
    const names = servingTlsSecrets('registry.k8scluster.kubeinit.local', '10.0.0.253');
    const made = await store.ensureGenerated([names.cert, names.key], new Set());
    assert.deepEqual(
      made.sort(),
      ['cluster-ca-cert', 'cluster-ca-cert-hash', 'cluster-ca-key', names.cert, names.key].sort(),
    );
    writeFileSync(join(dir, 'ca.crt'), store.get('cluster-ca-cert') ?? '');
    writeFileSync(join(dir, 'r.crt'), store.get(names.cert) ?? '');
    writeFileSync(join(dir, 'r.key'), store.get(names.key) ?? '', { mode: 0o600 });
    assert.match(
      execFileSync('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), join(dir, 'r.crt')], { encoding: 'utf8' }),
      /OK/,
    );
    const text = execFileSync('openssl', ['x509', '-in', join(dir, 'r.crt'), '-noout', '-text'], { encoding: 'utf8' });
    assert.match(text, /DNS:registry\.k8scluster\.kubeinit\.local, IP Address:10\.0\.0\.253/);
    assert.match(text, /CA:FALSE/);
    assert.match(text, /TLS Web Server Authentication/);
    assert.doesNotMatch(text, /Client Authentication/);
    const fromCert = execFileSync('openssl', ['x509', '-in', join(dir, 'r.crt'), '-noout', '-pubkey'], {
      encoding: 'utf8',
    });
    assert.equal(
      execFileSync('openssl', ['pkey', '-in', join(dir, 'r.key'), '-pubout'], { encoding: 'utf8' }),
      fromCert,
    );
    // Issued once: a second run keeps the pair.
    assert.deepEqual(await store.ensureGenerated([names.cert, names.key], new Set()), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a serving certificate near its end is due for re-issue; a bad IP is refused', () => {
  const ca = generateClusterCa();
  const now = new Date('2030-01-01T00:00:00Z');
  assert.equal(servingTlsDue(issueServingTls(ca.cert, ca.key, 'r.example', '10.0.0.1', 397, now).cert, now), false);
  assert.equal(servingTlsDue(issueServingTls(ca.cert, ca.key, 'r.example', '10.0.0.1', 30, now).cert, now), true);
  assert.equal(servingTlsDue('not a certificate', now), false);
  assert.throws(() => issueServingTls(ca.cert, ca.key, 'r.example', 'not-an-ip', 397, now), /not an IP address/);
});
