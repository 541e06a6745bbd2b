// The Windows kube-proxy and flanneld credentials: per-node pod tokens the
// kubelet requests and renews (render/manifests/windows-hostprocess.ts), so
// nothing is minted, captured, placed or renewed by kubemix; what earlier
// versions minted is removed — the copies on the first controller and on
// each Windows node — and nothing of it on Linux-only clusters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEGACY_TOKEN_FILES } from '../src/plan/tasks/kube-proxy-token.js';
import { planFor } from './helpers/shapes.js';
import { WIN } from '../src/render/windows/paths.js';

describe('Windows service tokens are gone (k8s-libvirt-1-1-1)', () => {
  const { plan, files } = planFor('k8s-libvirt-1-1-1');

  it('no task mints, captures or carries a Windows ServiceAccount token', () => {
    assert.ok(!plan.tasks.some((t) => / create token /.test(t.apply.script)));
    assert.ok(!plan.tasks.some((t) => (t.captures ?? []).some((c) => /windows-token/.test(c.name))));
    assert.ok(!plan.tasks.some((t) => t.secrets.some((s) => /windows-token/.test(s))));
    assert.ok(!files.some((f) => /\{\{secret:(kube-proxy|flannel)-windows-token\}\}/.test(f.content)));
  });

  it("the copies earlier versions minted are removed: on the first controller, and each Windows node's files", () => {
    const controller = plan.tasks.find((t) => t.id === 'task-deploy-cluster/controller-01/windows-legacy-tokens');
    assert.ok(controller !== undefined);
    for (const f of LEGACY_TOKEN_FILES) assert.ok(controller.apply.script.includes(f), f);
    assert.match(controller.check?.script ?? '', /\[ ! -e \/etc\/kubemix\/secrets\/kube-proxy-windows-token \]/);
    const node = plan.tasks.find((t) => t.host === 'compute-01' && t.name === 'win-retire-legacy');
    assert.ok(node !== undefined);
    for (const f of [WIN.kubeProxyToken, WIN.flanneldToken, WIN.kubeProxyKubeconfig, WIN.flanneldKubeconfig])
      assert.ok(node.apply.script.includes(f), f);
    assert.match(node.apply.script, /Unregister-ScheduledTask -TaskName 'kubemix-kube-proxy-token'/);
  });

  it('Linux-only clusters have none of it', () => {
    const linux = planFor('k8s-libvirt-3-0-2').plan;
    assert.ok(!linux.tasks.some((t) => /windows-legacy-tokens|win-retire-legacy/.test(t.name)));
  });
});
