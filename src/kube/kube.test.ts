import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pullSecretNames } from '../guard/pull-secrets.js';
import { kubeconfigAccess } from './config.js';

const config = (cluster: string, user: string): string =>
  `current-context: c\ncontexts:\n  - name: c\n    context: { cluster: k, user: u }\nclusters:\n  - name: k\n    cluster: ${cluster}\nusers:\n  - name: u\n    user: ${user}\n`;

test('kubeconfig: current context, CA inline, token or tokenFile; exec, skip-verify and http refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-kube-'));
  try {
    const at = (name: string, text: string): string => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    writeFileSync(join(dir, 'tok'), 'from-file\n');
    const ok = kubeconfigAccess(
      at(
        'a',
        config(
          `{ server: "https://10.0.0.1:6443/", certificate-authority-data: ${Buffer.from('PEM').toString('base64')} }`,
          '{ tokenFile: tok }',
        ),
      ),
    );
    assert.equal(ok.server, 'https://10.0.0.1:6443');
    assert.equal(ok.ca, 'PEM');
    assert.equal(ok.token(), 'from-file');
    assert.ok(!ok.origin.includes('from-file'));
    assert.throws(() => kubeconfigAccess(at('b', config('{ server: "https://x" }', '{ exec: { command: aws } }'))), {
      code: 'kube.kubeconfig',
    });
    assert.throws(
      () =>
        kubeconfigAccess(at('c', config('{ server: "https://x", insecure-skip-tls-verify: true }', '{ token: t }'))),
      { code: 'kube.kubeconfig' },
    );
    assert.throws(() => kubeconfigAccess(at('d', config('{ server: "http://x" }', '{ token: t }'))), {
      code: 'kube.kubeconfig',
    });
    assert.throws(() => kubeconfigAccess(at('e', config('{ server: "https://x" }', '{}'))), {
      code: 'kube.kubeconfig',
    });
    assert.throws(() => kubeconfigAccess(join(dir, 'missing')), { code: 'kube.kubeconfig' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pull secret names from every pod template, in order, once', () => {
  const spec = { imagePullSecrets: [{ name: 'b' }, { name: 'a' }, { name: 'b' }, {}, 'junk'], containers: [] };
  assert.deepEqual(pullSecretNames({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec }), ['b', 'a']);
  assert.deepEqual(
    pullSecretNames({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { jobTemplate: { spec: { template: { spec } } } },
    }),
    ['b', 'a'],
  );
  assert.deepEqual(pullSecretNames({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' } }), []);
});
