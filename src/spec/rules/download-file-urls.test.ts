import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidSpecError } from '../../errors.js';
import { readSpec } from '../read.js';

const SHA = 'a'.repeat(64);

function codesFor(url: string): string[] {
  const text = `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: { name: c }
spec:
  infrastructure: { driver: libvirt, hypervisors: [{ name: hv, address: hv.example.com }] }
  downloads: { images/debian-13: { url: "${url}", sha256: "${SHA}" } }
`;
  try {
    readSpec({ kind: 'file', path: 'c.yaml', text });
    return [];
  } catch (e) {
    if (!(e instanceof InvalidSpecError)) throw e;
    return e.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.path}`);
  }
}

test('a file: URL naming a host other than localhost is refused at its spec path', () => {
  for (const url of ['file://fileserver/srv/d.qcow2', 'FILE://Server/d.qcow2', 'file://127.0.0.1/d.qcow2'])
    assert.deepEqual(codesFor(url), ['downloads.file-url-host spec.downloads.images/debian-13.url'], url);
});

test('a file: URL without a host, or with localhost, and other schemes pass this rule', () => {
  for (const url of ['file:///srv/d.qcow2', 'file://localhost/srv/d.qcow2', 'https://fileserver/d.qcow2'])
    assert.deepEqual(codesFor(url), [], url);
});
