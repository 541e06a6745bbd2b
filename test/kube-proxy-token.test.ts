// The Windows services' ServiceAccount tokens: minted on the first
// controller with admin.conf after the cluster manifests, captured as
// secrets, awaited by the Windows kube-proxy and flanneld; renewed only by
// the executor (no ServiceAccount may mint its own tokens, no node calls
// TokenRequest); nothing of it on Linux-only clusters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemblePlan } from '../src/plan/assemble.js';
import { KUBE_PROXY_TOKEN_FILE } from '../src/plan/tasks/kube-proxy-token.js';
import type { Task } from '../src/plan/types.js';
import { planFor } from './helpers/shapes.js';
import { modelFor as comboModel } from './windows/fixtures.js';

const MINT = 'task-deploy-cluster/controller-01/kube-proxy-windows-token';
const MINT_FLANNEL = 'task-deploy-cluster/controller-01/flannel-windows-token';

function dependsOn(tasks: readonly Task[], from: Task, target: string): boolean {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const stack = [...from.after];
  const seen = new Set<string>();
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    if (id === target) return true;
    if (!seen.has(id)) {
      seen.add(id);
      stack.push(...(byId.get(id)?.after ?? []));
    }
  }
  return false;
}

describe('Windows service tokens (k8s-libvirt-1-1-1)', () => {
  const { plan, files } = planFor('k8s-libvirt-1-1-1');
  const mint = plan.tasks.find((t) => t.id === MINT);
  const mintFlannel = plan.tasks.find((t) => t.id === MINT_FLANNEL);

  it('are minted on the first controller after the cluster manifests, with TokenRequest, into captured 0600 files', () => {
    assert.ok(mint !== undefined && mintFlannel !== undefined);
    assert.deepEqual(mint.after, ['task-deploy-cluster/controller-01/cluster-manifests']);
    assert.deepEqual(mint.captures, [{ name: 'kube-proxy-windows-token', remotePath: KUBE_PROXY_TOKEN_FILE }]);
    assert.match(mint.apply.script, /umask 077/);
    assert.match(
      mint.apply.script,
      /--kubeconfig=\/etc\/kubernetes\/admin\.conf -n kube-system create token kube-proxy --duration=2160h > /,
    );
    assert.match(mintFlannel.apply.script, /-n kube-flannel create token flannel-windows --duration=2160h > /);
    // Re-minted by a kubemix up once 30 days old.
    assert.match(mint.check?.script ?? '', /-mmin -43200\)/);
  });

  it('kube-proxy and flanneld wait for their token; the step re-runs when the store holds a longer-lived one', () => {
    const proxies = plan.tasks.filter((t) => t.name === 'win-kube-proxy');
    const flannels = plan.tasks.filter((t) => t.name === 'win-flanneld');
    assert.ok(proxies.length > 0 && flannels.length === proxies.length);
    for (const p of proxies) {
      assert.ok(p.after.includes(MINT), p.id);
      assert.ok(dependsOn(plan.tasks, p, 'task-deploy-cluster/controller-01/cluster-manifests'));
      assert.deepEqual(p.secrets, ['kube-proxy-windows-token']);
      assert.match(p.check?.script ?? '', /-ge \(Get-KubemixTokenExpiry \$stored\)/);
      assert.match(p.apply.script, /Unregister-ScheduledTask -TaskName 'kubemix-kube-proxy-token'/);
    }
    for (const f of flannels) {
      assert.ok(f.after.includes(MINT_FLANNEL), f.id);
      assert.deepEqual(f.secrets, ['flannel-windows-token']);
      assert.match(f.check?.script ?? '', /Get-KubemixTokenFile 'C:\\k\\flanneld\\token'/);
    }
    assert.equal(
      plan.tasks.some((t) => t.name.includes('token-renewal')),
      false,
      'no node-side renewal',
    );
  });

  it('no manifest lets a ServiceAccount request tokens; no Windows file calls the TokenRequest API', () => {
    const manifests = files
      .filter((f) => f.node === 'cluster')
      .map((f) => f.content)
      .join('\n');
    assert.doesNotMatch(manifests, /serviceaccounts\/token/);
    assert.equal(
      files.some((f) => f.remotePath.endsWith('renew-kube-proxy-token.ps1')),
      false,
    );
  });

  it("the kubeconfigs name the token files, never a token, and flanneld's is not the kubelet's", () => {
    const kubeconfig = files.find((f) => f.remotePath === 'C:\\k\\kube-proxy\\kubeconfig.conf')?.content ?? '';
    assert.match(kubeconfig, /tokenFile: 'C:\\k\\kube-proxy\\token'/);
    const flannel = files.find((f) => f.remotePath === 'C:\\k\\flanneld\\kubeconfig.conf')?.content ?? '';
    assert.match(flannel, /tokenFile: 'C:\\k\\flanneld\\token'/);
    for (const k of [kubeconfig, flannel]) assert.doesNotMatch(k, /\{\{secret:/);
    const service = files.find((f) => f.remotePath.endsWith('flanneld-service.xml'))?.content ?? '';
    assert.match(service, /--kubeconfig-file=C:\\k\\flanneld\\kubeconfig\.conf/);
    assert.doesNotMatch(service, /kubelet\.conf/);
  });
});

describe('HostProcess mode', () => {
  it('mints no flanneld token: the pod has its own', () => {
    const { plan } = assemblePlan(comboModel({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan', hostProcess: true }));
    assert.ok(plan.tasks.some((t) => t.id === MINT));
    assert.equal(
      plan.tasks.some((t) => t.id === MINT_FLANNEL),
      false,
    );
  });
});

describe('Linux-only clusters', () => {
  it('plan no token and no renewal', () => {
    const { plan, files } = planFor('k8s-libvirt-3-2-1');
    assert.equal(
      plan.tasks.some((t) => t.name.includes('windows-token') || t.name.includes('token-renewal')),
      false,
    );
    assert.equal(
      files.some((f) => f.remotePath.includes('kube-proxy-windows')),
      false,
    );
  });
});
