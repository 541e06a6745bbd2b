// With a proxy in the spec: containerd gets a systemd drop-in and every
// script that reaches the internet exports the proxy, with the cluster's
// networks exempt; node binaries come from the services node, not through it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { REPO } from './helpers/shapes.js';

describe('proxy environment', () => {
  const base = readFileSync(join(REPO, 'examples', 'k8s-libvirt-1-1-1.yaml'), 'utf8');
  const text = `${base}  proxy:\n    http: http://proxy.example.com:3128\n    https: http://proxy.example.com:3128\n    noProxy: [intranet.example.com]\n`;
  const { plan, files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'proxy.yaml', text })));

  it('containerd gets HTTP(S)_PROXY and NO_PROXY with the cluster networks', () => {
    const dropin = files.find((f) => f.remotePath === '/etc/systemd/system/containerd.service.d/http-proxy.conf');
    assert.match(dropin?.content ?? '', /^Environment="HTTPS_PROXY=http:\/\/proxy\.example\.com:3128"$/m);
    assert.match(
      dropin?.content ?? '',
      /^Environment="NO_PROXY=intranet\.example\.com,localhost,127\.0\.0\.1,10\.0\.0\.0\/24,10\.244\.0\.0\/16,10\.96\.0\.0\/12,\.k8scluster\.kubeinit\.local,\.svc,\.cluster\.local"$/m,
    );
    const containerd = plan.tasks.find((t) => t.id === 'task-prepare-cluster/controller-01/containerd');
    assert.ok(containerd?.uploads.some((u) => u.artifact.endsWith('http-proxy.conf')));
  });

  it('scripts that reach the internet export the proxy and still pass shellcheck', () => {
    // pkgs.k8s.io is reached only with `kubernetes.install: packages`.
    const withPackages = text.replace(/^(\s*)version: ("?[0-9.]+"?)$/m, '$1version: $2\n$1install: packages');
    assert.notEqual(withPackages, text);
    const packaged = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'p.yaml', text: withPackages }))).plan;
    for (const [p, name] of [
      [plan, 'download-tools'],
      [packaged, 'kubernetes-packages'],
    ] as const) {
      const t = p.tasks.find((x) => x.id === `task-prepare-cluster/controller-01/${name}`);
      assert.match(t?.apply.script ?? '', /^export https_proxy=http:\/\/proxy\.example\.com:3128$/m, name);
      const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], {
        input: t?.apply.script,
        encoding: 'utf8',
      });
      assert.equal(lint.status, 0, lint.stdout);
    }
  });

  it("node binaries come from the services node's cache, past the proxy, and pass shellcheck", () => {
    for (const name of [
      'containerd-binaries',
      'runc',
      'cni-plugins',
      'kubeadm-binary',
      'kubelet-binary',
      'crictl-binary',
    ]) {
      const t = plan.tasks.find((x) => x.id === `task-prepare-cluster/controller-01/${name}`);
      const script = t?.apply.script ?? '';
      assert.doesNotMatch(script, /https_proxy/, name);
      assert.match(
        script,
        /curl -fsSL --retry 5 --retry-all-errors --noproxy '\*' --cacert "\$work\/ca\.crt" -o "\$file" 'https:\/\/10\.0\.0\.253:8443\/sha256\/\{\{sha256:linux\/[a-z.-]+\}\}'$/m,
        name,
      );
      const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], { input: script, encoding: 'utf8' });
      assert.equal(lint.status, 0, lint.stdout);
    }
  });
});
