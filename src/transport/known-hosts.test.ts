import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KnownHostsFile,
  fingerprint,
  hostKeyAlgorithms,
  hostKeyName,
  keyTypeOf,
  parseKnownHosts,
  verifyKey,
} from './known-hosts.js';

function blob(type: string, seed: string): Buffer {
  const t = Buffer.from(type);
  const k = Buffer.from(seed.padEnd(32, 'x'));
  const out = Buffer.alloc(8 + t.length + k.length);
  out.writeUInt32BE(t.length, 0);
  t.copy(out, 4);
  out.writeUInt32BE(k.length, 4 + t.length);
  k.copy(out, 8 + t.length);
  return out;
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

const A = blob('ssh-ed25519', 'a');
const B = blob('ssh-ed25519', 'b');
const line = (hosts: string, key: Buffer, marker = ''): string =>
  `${marker}${marker ? ' ' : ''}${hosts} ${keyTypeOf(key)} ${key.toString('base64')}`;

describe('known_hosts', () => {
  it('names hosts the OpenSSH way', () => {
    assert.equal(hostKeyName('198.51.100.2', 22), '198.51.100.2');
    assert.equal(hostKeyName('198.51.100.2', 2222), '[198.51.100.2]:2222');
  });

  it('accepts plain, hashed, [host]:port and wildcard lines; rejects negated matches', () => {
    const lines = parseKnownHosts(
      [
        line('198.51.100.2', A),
        line(hashed('[198.51.100.3]:2222'), A),
        line('198.51.100.1*,!198.51.100.19', A),
        '# comment',
        '',
      ].join('\n'),
    );
    assert.equal(verifyKey(lines, '198.51.100.2', A).status, 'ok');
    assert.equal(verifyKey(lines, '[198.51.100.3]:2222', A).status, 'ok');
    assert.equal(verifyKey(lines, '198.51.100.3', A).status, 'unknown', 'the port is part of the name');
    assert.equal(verifyKey(lines, '198.51.100.17', A).status, 'ok');
    assert.equal(verifyKey(lines, '198.51.100.19', A).status, 'unknown');
  });

  it('reports a changed key with both fingerprints, and revoked keys', () => {
    const lines = parseKnownHosts([line('198.51.100.2', A), line('*', B, '@revoked')].join('\n'));
    const v = verifyKey(lines, '198.51.100.2', blob('ssh-ed25519', 'c'));
    assert.equal(v.status, 'changed');
    assert.deepEqual(v.status === 'changed' ? v.known : [], [fingerprint(A)]);
    assert.match(fingerprint(A), /^SHA256:[A-Za-z0-9+/]{43}$/);
    assert.equal(verifyKey(lines, '198.51.100.2', B).status, 'revoked');
  });

  it('keeps @cert-authority lines but never accepts a plain key through them', () => {
    const lines = parseKnownHosts(line('*.test.local,198.51.100.*', A, '@cert-authority'));
    const v = verifyKey(lines, '198.51.100.5', A);
    assert.deepEqual([v.status, v.status === 'unknown' && v.caOnly], ['unknown', true]);
  });

  it('offers only the algorithms of known keys for a host', () => {
    const lines = parseKnownHosts([line('h1', A), line('h1', blob('ssh-rsa', 'r'))].join('\n'));
    assert.deepEqual(hostKeyAlgorithms(lines, 'h1'), ['ssh-ed25519', 'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']);
    assert.deepEqual(hostKeyAlgorithms(lines, 'other'), []);
  });

  it('records a new key (TOFU) in a 0600 file that reloads', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kh-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'state', 'known_hosts');
    const kh = await new KnownHostsFile(file).load();
    await kh.add('[198.51.100.9]:2200', A);
    assert.equal(kh.verify('[198.51.100.9]:2200', A).status, 'ok');
    assert.equal((await new KnownHostsFile(file).load()).verify('[198.51.100.9]:2200', A).status, 'ok');
    assert.match(readFileSync(file, 'utf8'), /^\[198\.51\.100\.9\]:2200 ssh-ed25519 /);
  });
});
