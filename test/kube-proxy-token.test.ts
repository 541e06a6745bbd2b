// The Windows kube-proxy's credentials: minted on the first controller after
// the cluster manifests, captured as a secret, awaited by every Windows
// kube-proxy, renewed on the node; nothing of it on Linux-only clusters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KUBE_PROXY_TOKEN_FILE } from '../src/plan/tasks/kube-proxy-token.js';
import type { Task } from '../src/plan/types.js';
import { planFor } from './helpers/shapes.js';

const MINT = 'task-deploy-cluster/controller-01/kube-proxy-windows-token';

function dependsOn(tasks: readonly Task[], from: Task, target: string): boolean {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const stack = [...from.after];
  const seen = new Set<string>();
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    if (id === target) return true;
    if (!seen.has(id)) { seen.add(id); stack.push(...(byId.get(id)?.after ?? [])); }
  }
  return false;
}

describe('Windows kube-proxy token (k8s-libvirt-1-1-1)', () => {
  const { plan, files } = planFor('k8s-libvirt-1-1-1');
  const mint = plan.tasks.find((t) => t.id === MINT);

  it('is minted on the first controller after the cluster manifests, with TokenRequest, into a captured 0600 file', () => {
    assert.ok(mint !== undefined);
    assert.deepEqual(mint.after, ['task-deploy-cluster/controller-01/cluster-manifests']);
    assert.deepEqual(mint.captures, [{ name: 'kube-proxy-windows-token', remotePath: KUBE_PROXY_TOKEN_FILE }]);
    assert.match(mint.apply.script, /umask 077/);
    assert.match(mint.apply.script, /-n kube-system create token kube-proxy --duration=720h > /);
    assert.match(mint.check?.script ?? '', /-mmin -21600/);
  });

  it('every Windows kube-proxy waits for it; the renewal runs after deploy', () => {
    const proxies = plan.tasks.filter((t) => t.name === 'win-kube-proxy');
    assert.ok(proxies.length > 0);
    for (const p of proxies) {
      assert.ok(p.after.includes(MINT), p.id);
      assert.ok(dependsOn(plan.tasks, p, 'task-deploy-cluster/controller-01/cluster-manifests'));
    }
    const renewals = plan.tasks.filter((t) => t.name === 'win-kube-proxy-token-renewal');
    assert.equal(renewals.length, proxies.length);
    for (const r of renewals) assert.equal(r.stage, 'task-post-deployment');
  });

  it('the renewal Role allows token requests for kube-proxy only', () => {
    const rbac = files.find((f) => f.node === 'cluster' && f.remotePath === 'manifests/kube-proxy-windows-rbac.yaml');
    assert.ok(rbac !== undefined);
    const role = parseAllDocuments(rbac.content).map((d) => d.toJS() as { kind: string; rules?: unknown }).find((d) => d.kind === 'Role');
    assert.deepEqual(role?.rules, [{ apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['kube-proxy'], verbs: ['create'] }]);
    const renew = files.find((f) => f.remotePath.endsWith('renew-kube-proxy-token.ps1'))?.content ?? '';
    assert.match(renew, /serviceaccounts\/kube-proxy\/token'/);
    assert.match(renew, /'--cacert', 'C:\\etc\\kubernetes\\pki\\ca.crt'/);
    assert.doesNotMatch(renew, /Bearer ' \+ \$current\)\s*\n\s*& /, 'the token goes to curl through a file');
  });

  it('the kubeconfig names the token file, never the token', () => {
    const kubeconfig = files.find((f) => f.remotePath === 'C:\\k\\kube-proxy\\kubeconfig.conf')?.content ?? '';
    assert.match(kubeconfig, /tokenFile: 'C:\\k\\kube-proxy\\token'/);
    assert.doesNotMatch(kubeconfig, /\{\{secret:/);
  });
});

describe('Linux-only clusters', () => {
  it('plan no token, no renewal and no Role', () => {
    const { plan, files } = planFor('k8s-libvirt-3-2-1');
    assert.equal(plan.tasks.some((t) => t.name.includes('kube-proxy-windows') || t.name.includes('token-renewal')), false);
    assert.equal(files.some((f) => f.remotePath.includes('kube-proxy-windows')), false);
  });
});
