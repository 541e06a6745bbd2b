// Download URLs are what the docs promise (docs/linux-and-services.md, docs/libvirt.md):
// http(s):// with a host, or a file:/// path; no #fragment (the fetcher drops it,
// so a payload there passes a SHA256 pin), user:password@ only as valid percent-encoding
// (it becomes a secret: model/url-credentials.ts), at most 2048
// characters, a space written %20. Every other shape is refused at its spec path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidSpecError } from '../errors.js';
import { readSpec } from './read.js';

const SHA = 'a'.repeat(64);

function messagesFor(id: string, url: string): string[] {
  const text = `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: { name: c }
spec:
  infrastructure: { driver: libvirt, hypervisors: [{ name: hv, address: hv.example.com }] }
  downloads: { ${JSON.stringify(id)}: { url: ${JSON.stringify(url)}, sha256: "${SHA}" } }
`;
  try {
    readSpec({ kind: 'file', path: 'c.yaml', text });
    return [];
  } catch (e) {
    if (!(e instanceof InvalidSpecError)) throw e;
    return e.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.path}: ${d.message}`);
  }
}

test('download URLs of other schemes, with a fragment, credentials, a raw space or too long are refused at their path', () => {
  const cases: [string, RegExp][] = [
    ['javascript:alert(1)', /http\(s\):\/\/ URL with a host, or a file:\/\/\/ path/],
    ['data:text/plain,x', /http\(s\):\/\/ URL with a host/],
    ['ftp://h.example/containerd.tar.gz', /http\(s\):\/\/ URL with a host/],
    ['https://', /http\(s\):\/\/ URL with a host/],
    ["https://h.example/KMX#'$(id)'", /quotes/],
    ['https://h.example/KMX#$(id)', /#fragment/],
    ['https://us%zzer:pass@h.example/containerd.tar.gz', /user:password@ must .*percent-encoding/],
    ['https://:pass@h.example/containerd.tar.gz', /user:password@ must name a user/],
    [`https://u:${'p'.repeat(600)}@h.example/containerd.tar.gz`, /at most 512/],
    ['https://u:p%0Aw@h.example/containerd.tar.gz', /user:password@ must/],
    ['file:///srv/my image.tgz', /%20/],
    ['file:///srv/a%2Fb.tgz', /%2F/],
    [`https://h.example/${'a'.repeat(2048)}`, /2048/],
  ];
  for (const id of ['linux/containerd.tar.gz', 'linux/runc', 'images/debian-13']) {
    for (const [url, why] of cases) {
      const got = messagesFor(id, url);
      assert.ok(got.length > 0, `${id} ${url}: accepted`);
      assert.ok(
        got.every((m) => m.startsWith(`spec.downloads.${id}.url: `)),
        `${id} ${url}: ${JSON.stringify(got)}`,
      );
      assert.ok(
        got.some((m) => why.test(m)),
        `${id} ${url}: ${JSON.stringify(got)}`,
      );
    }
  }
});

test('https:// and file:/// download URLs (a space as %20) pass', () => {
  for (const url of [
    'https://mirror.example/containerd.tar.gz',
    'file:///srv/my%20image.tgz',
    'file://localhost/srv/x',
    'https://user:p%40ss@mirror.example/containerd.tar.gz',
  ])
    assert.deepEqual(messagesFor('images/debian-13', url), [], url);
});
