import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runCli } from './helpers/cli.js';

const ADMIN = `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: Q0E=
    server: https://api.k8scluster.kubeinit.local:6443
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubernetes-admin
  name: kubernetes-admin@kubernetes
current-context: kubernetes-admin@kubernetes
users:
- name: kubernetes-admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
`;

test('kubemix kubeconfig writes the admin kubeconfig 0600 and merges it keeping other contexts', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-kubeconfig-'));
  try {
    const state = join(root, 'state');
    mkdirSync(state, { mode: 0o700 });
    const missing = await runCli(['kubeconfig', 'k8s-libvirt-1-1-1', '--state-dir', state]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /kubeconfig\.missing/);
    writeFileSync(
      join(state, 'secrets.json'),
      JSON.stringify({ 'admin-kubeconfig': { value: ADMIN, source: 'captured', at: '' } }),
      { mode: 0o600 },
    );
    const plain = await runCli(['kubeconfig', 'k8s-libvirt-1-1-1', '--state-dir', state]);
    assert.equal(plain.code, 0, plain.stderr);
    const written = join(state, 'kubeconfig');
    assert.equal(statSync(written).mode & 0o777, 0o600);
    const ours = parse(readFileSync(written, 'utf8')) as {
      'current-context': string;
      contexts: { name: string; context: { cluster: string; user: string } }[];
    };
    assert.equal(ours['current-context'], 'k8scluster');
    assert.deepEqual(ours.contexts, [
      { name: 'k8scluster', context: { cluster: 'k8scluster', user: 'k8scluster-admin' } },
    ]);

    const home = join(root, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(
      join(home, '.kube', 'config'),
      'apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster: {server: "https://other:6443"}\nusers:\n- name: me\n  user: {token: x}\ncontexts:\n- name: other\n  context: {cluster: other, user: me}\ncurrent-context: other\n',
    );
    const merged = await runCli(['kubeconfig', 'k8s-libvirt-1-1-1', '--state-dir', state, '--merge'], {
      env: { HOME: home },
    });
    assert.equal(merged.code, 0, merged.stderr);
    const doc = parse(readFileSync(join(home, '.kube', 'config'), 'utf8')) as {
      'current-context': string;
      contexts: { name: string }[];
      clusters: { name: string }[];
    };
    assert.deepEqual(
      doc.contexts.map((c) => c.name),
      ['other', 'k8scluster'],
    );
    assert.deepEqual(
      doc.clusters.map((c) => c.name),
      ['other', 'k8scluster'],
    );
    assert.equal(doc['current-context'], 'other', 'merging does not switch contexts unless --use');
    assert.equal(statSync(join(home, '.kube', 'config')).mode & 0o777, 0o600);
    const again = await runCli(['kubeconfig', 'k8s-libvirt-1-1-1', '--state-dir', state, '--merge', '--use'], {
      env: { HOME: home },
    });
    assert.equal(again.code, 0, again.stderr);
    const used = parse(readFileSync(join(home, '.kube', 'config'), 'utf8')) as {
      'current-context': string;
      contexts: { name: string }[];
    };
    assert.deepEqual(
      used.contexts.map((c) => c.name),
      ['other', 'k8scluster'],
      'a second merge replaces, never duplicates',
    );
    assert.equal(used['current-context'], 'k8scluster');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
