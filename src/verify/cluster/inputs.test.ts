import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VERIFY_PROBE_IMAGES, WINDOWS } from '../../matrix/index.js';
import { parseEgress } from './egress.js';
import { imageRefProblem, parseProbeImageOverrides } from './images.js';

const D = 'sha256:9db7b59979c38555a39def84a31fb98b5296952f9e3afd4f6f11f05b07adfab0';

test('image references: the distribution grammar, a sha256 digest of 64 lower-case hex digits', () => {
  for (const ok of [
    'busybox',
    'busybox:1.37.0',
    `docker.io/library/busybox:1.37.0@${D}`,
    `registry.example.com:5000/mirror/busybox@${D}`,
    'localhost:5000/a/b_c/d-e:v1',
    '[2001:db8::1]:5000/busybox:1',
  ])
    assert.equal(imageRefProblem(ok), undefined, ok);
  for (const [bad, why] of [
    ['BusyBox:1', /not an image reference/],
    ['busybox:', /not an image reference/],
    ['busybox@sha256:abc', /not an image reference/],
    [`busybox@${D.toUpperCase().replace('SHA256', 'sha256')}`, /64 lower-case hex digits/],
    [`busybox@md5:${'a'.repeat(32)}`, /algorithm md5 is not sha256/],
    ['a b', /not an image reference/],
    [`${'a/'.repeat(130)}a`, /longer than 255/],
  ] as const)
    assert.match(imageRefProblem(bad) ?? '', why, bad);
});

test('the matrix: a valid probe image for Linux and every Windows LTSC line; busybox pinned by digest', () => {
  for (const key of ['linux', ...WINDOWS.map((w) => w.ltsc)]) {
    const ref = VERIFY_PROBE_IMAGES[key];
    assert.ok(ref !== undefined, key);
    assert.equal(imageRefProblem(ref), undefined, ref);
  }
  assert.match(VERIFY_PROBE_IMAGES['linux'] ?? '', /@sha256:[a-f0-9]{64}$/);
});

test('--probe-image: KEY=REF with a known key and a valid reference, else an input error naming the flag', () => {
  assert.deepEqual(parseProbeImageOverrides([`linux=reg.local/busybox@${D}`, 'ltsc2022=reg.local/sc:ltsc2022']), {
    linux: `reg.local/busybox@${D}`,
    ltsc2022: 'reg.local/sc:ltsc2022',
  });
  for (const [bad, why] of [
    ['busybox:1', /no KEY= before the image/],
    ['ltsc2019=x', /unknown key ltsc2019/],
    ['linux=busybox@sha256:123', /not an image reference/],
  ] as const)
    assert.throws(
      () => parseProbeImageOverrides([bad]),
      (e: Error & { code?: string; path?: string; hint?: string }) =>
        e.code === 'flags.invalid' &&
        e.path === 'flags.probe-image' &&
        why.test(e.message) &&
        /linux, ltsc2022/.test(e.hint ?? ''),
    );
});

test('--egress: HOST:PORT with a DNS name, IPv4 or [IPv6] and a port 1-65535; duplicates once', () => {
  assert.deepEqual(parseEgress(['example.org:443', '192.0.2.1:53', '[2001:db8::1]:80', 'example.org:443']), [
    'example.org:443',
    '192.0.2.1:53',
    '[2001:db8::1]:80',
  ]);
  for (const bad of [
    'example.org',
    'example.org:0',
    'example.org:65536',
    '2001:db8::1:80',
    '[192.0.2.1]:80',
    '-x.org:1',
    'a_b:1',
  ])
    assert.throws(
      () => parseEgress([bad]),
      (e: Error & { code?: string; path?: string }) => e.code === 'flags.invalid' && e.path === 'flags.egress',
      bad,
    );
});
