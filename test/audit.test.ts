// The authorization audit over the plans kubemix makes: every component's
// requests are allowed and no credential holds more than its users need.
// Each mutation below is a regression the audit must catch: flanneld on the
// kubelet's credential (in its launcher or its DaemonSet), a ServiceAccount
// that may mint its own tokens, a broader flannel-windows role, a token
// minted for the Windows pods again.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { auditPlan, auditSummaryMarkdown, auditText, guardAudit, type AuditResult } from '../src/audit/index.js';
import { nodeAuthorizer } from '../src/audit/node-authorizer.js';
import { policyFrom, rbacAllows } from '../src/audit/rbac.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../src/plan/assemble.js';
import { WIN } from '../src/render/windows/paths.js';
import { readSpec } from '../src/spec/read.js';
import { REPO, SHAPES, planFor } from './helpers/shapes.js';
import { modelFor as comboModel, type Combo } from './windows/fixtures.js';

const HOSTPROCESS: Combo = { k8s: '1.36', os: 'windows-2022', backend: 'vxlan', hostProcess: true };
const HOST_GW: Combo = { k8s: '1.34', os: 'windows-2025', backend: 'host-gw' };

function examplePlan(name: string): AssembledPlan {
  const path = join(REPO, 'examples', `${name}.yaml`);
  return assemblePlan(resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') })));
}

const errors = (r: AuditResult): string[] =>
  r.findings.filter((f) => f.severity === 'error').map((f) => `${f.credential}: ${f.message}`);

/** The plan with one file's content rewritten. */
function edit(
  p: AssembledPlan,
  match: (f: AssembledPlan['files'][number]) => boolean,
  change: (content: string) => string,
): AssembledPlan {
  let hit = 0;
  const files = p.files.map((f) => {
    if (!match(f)) return f;
    hit += 1;
    return { ...f, content: change(f.content) };
  });
  assert.ok(hit > 0, 'the mutation found its file');
  return { plan: p.plan, files };
}

describe('authorization audit of the bundled plans', () => {
  const plans: [string, AssembledPlan][] = [
    ...SHAPES.map((s): [string, AssembledPlan] => [s, planFor(s)]),
    ['existing-host-gw', examplePlan('existing-host-gw')],
    ['windows hostprocess', assemblePlan(comboModel(HOSTPROCESS))],
    ['windows host-gw', assemblePlan(comboModel(HOST_GW))],
  ];
  for (const [name, p] of plans) {
    it(`${name}: every needed request allowed, nothing broader`, () => {
      const r = auditPlan(p, { extra: guardAudit('kubemix-guard', true) });
      assert.deepEqual(errors(r), [], auditText(r));
      assert.ok(r.ok);
      // Every listed request was decided, and each names its upstream source.
      for (const { decisions } of r.components) for (const d of decisions) assert.ok(d.request.source.length > 0);
    });
  }

  it('covers every component of a mixed cluster, with the credential it really uses', () => {
    const r = auditPlan(planFor('k8s-libvirt-1-1-1'));
    const cred = (name: string): string[] =>
      r.components.filter((c) => c.component.name === name).map((c) => JSON.stringify(c.component.credential));
    assert.match(
      cred('flanneld (HostProcess)').join(),
      /"serviceaccount".*"kube-flannel".*"flannel-windows".*"projected \(pod\)"/,
    );
    assert.match(cred('kube-proxy (HostProcess)').join(), /"kube-system".*"kube-proxy".*"projected \(pod\)"/);
    assert.match(cred('flanneld').join(), /"kube-flannel".*"flannel"/);
    assert.match(cred('kubelet').join(), /"node"/);
    assert.match(cred('CoreDNS').join(), /"coredns"/);
    assert.deepEqual(cred('token minting and renewal'), [], 'nothing mints a token for the Windows pods');
    assert.match(cred("executor's kubectl").join(), /"admin"/);
  });

  it("the Windows pods use their own projected tokens and reach the API by address (default image and the spec's)", () => {
    for (const p of [planFor('k8s-libvirt-1-1-1'), assemblePlan(comboModel(HOSTPROCESS))]) {
      const r = auditPlan(p);
      const c = r.components.find((x) => x.component.name === 'flanneld (HostProcess)')?.component;
      assert.deepEqual(c?.credential, {
        kind: 'serviceaccount',
        namespace: 'kube-flannel',
        name: 'flannel-windows',
        how: 'projected (pod)',
      });
      const manifest = p.files.find((f) => f.remotePath === 'manifests/windows-hostprocess.yaml')?.content ?? '';
      assert.doesNotMatch(manifest, /kubeconfig/);
      assert.match(manifest, /name: KUBERNETES_SERVICE_HOST\n\s+value: 10\.0\.0\.\d+/);
      assert.equal(
        p.plan.tasks.some((t) => /windows-token$/.test(t.name)),
        false,
        'no token minted for a pod that has its own',
      );
    }
  });
});

describe('the audit catches the regressions it exists for', () => {
  it("fails when the flanneld pod's launcher is pointed back at kubelet.conf", () => {
    const p = edit(
      planFor('k8s-libvirt-1-1-1'),
      (f) => f.remotePath === WIN.flanneldLauncher,
      (c) => c.replace("'--kube-subnet-mgr'", `'--kube-subnet-mgr' '--kubeconfig-file=${WIN.kubeletKubeconfig}'`),
    );
    const e = errors(auditPlan(p));
    assert.ok(
      e.some((m) => /flanneld \(HostProcess\).*list nodes \(all\) is denied — Node authorizer/.test(m)),
      e.join('\n'),
    );
    assert.ok(e.some((m) => /watch nodes \(all\) is denied/.test(m)));
  });

  it("fails when the flanneld DaemonSet is given the kubelet's kubeconfig", () => {
    const p = edit(
      assemblePlan(comboModel(HOSTPROCESS)),
      (f) => f.remotePath === 'manifests/windows-hostprocess.yaml',
      (c) =>
        c.replace(
          /^( *)- -File\n( *)- C:\\k\\kubemix\\flanneld-start\.ps1$/m,
          `$&\n$1- --kubeconfig-file=${WIN.kubeletKubeconfig}`,
        ),
    );
    const e = errors(auditPlan(p));
    assert.ok(
      e.some((m) => /flanneld \(HostProcess\).*list nodes \(all\) is denied/.test(m)),
      e.join('\n'),
    );
  });

  it('fails when a ServiceAccount may mint tokens for itself (the old kube-proxy renewal Role)', () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'renew', namespace: 'kube-system' },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['kube-proxy'], verbs: ['create'] },
      ],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'renew', namespace: 'kube-system' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'renew' },
      subjects: [{ kind: 'ServiceAccount', name: 'kube-proxy', namespace: 'kube-system' }],
    };
    const p = edit(
      planFor('k8s-libvirt-1-1-1'),
      (f) => f.remotePath === 'manifests/flannel-windows-rbac.yaml',
      (c) => `${c}---\n${stringify(role)}---\n${stringify(binding)}`,
    );
    const e = errors(auditPlan(p));
    assert.ok(
      e.some((m) => /kube-system\/kube-proxy.*mint tokens for itself.*kube-proxy \(linux\)/.test(m)),
      e.join('\n'),
    );
  });

  it('fails when the flannel-windows role grows beyond what flanneld needs', () => {
    const p = edit(
      planFor('k8s-libvirt-1-1-1'),
      (f) => f.remotePath === 'manifests/flannel-windows-rbac.yaml',
      (c) => c.replace('- nodes/status', '- nodes/status\n      - secrets'),
    );
    const e = errors(auditPlan(p));
    assert.ok(
      e.some((m) => /flannel-windows.*patch secrets.*broader than/.test(m)),
      e.join('\n'),
    );
  });

  it('fails when the guard webhook may list secrets, or a rendered binding names an unused ServiceAccount', () => {
    const extra = guardAudit('kubemix-guard', true);
    const widened = {
      ...extra,
      objects: extra.objects.map((o) =>
        o['kind'] === 'ClusterRole'
          ? { ...o, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }] }
          : o,
      ),
    };
    assert.ok(
      errors(auditPlan(planFor('k8s-libvirt-3-2-1'), { extra: widened })).some((m) =>
        /list secrets.*may read secrets/.test(m),
      ),
    );
    const unused = { ...extra, components: [] };
    assert.ok(
      errors(auditPlan(planFor('k8s-libvirt-3-2-1'), { extra: unused })).some((m) => /no component runs as/.test(m)),
    );
  });
});

describe('the evaluators', () => {
  it('Node authorizer with selectors: its own Node only, never a list of all', () => {
    assert.equal(
      nodeAuthorizer('w1', { verb: 'get', group: '', resource: 'nodes', name: 'w1', scope: 'own-node' }).allowed,
      true,
    );
    assert.equal(nodeAuthorizer('w1', { verb: 'get', group: '', resource: 'nodes', name: 'w2' }).allowed, false);
    assert.equal(nodeAuthorizer('w1', { verb: 'list', group: '', resource: 'nodes' }).allowed, false);
    assert.equal(
      nodeAuthorizer('w1', { verb: 'get', group: '', resource: 'secrets', namespace: 'kube-system', name: 'x' })
        .allowed,
      false,
    );
    assert.equal(nodeAuthorizer('w1', { verb: 'list', group: '', resource: 'services' }).allowed, true);
    assert.equal(
      nodeAuthorizer('w1', {
        verb: 'update',
        group: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'default',
        scope: 'own-node',
      }).allowed,
      false,
    );
  });

  it('RBAC: resourceNames, RoleBinding namespaces and subresource wildcards', () => {
    const docs = parseAllDocuments(`kind: Role
metadata: {name: r, namespace: a}
rules: [{apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: [x], verbs: [create]}, {apiGroups: [''], resources: ['pods/*'], verbs: [get]}]
---
kind: RoleBinding
metadata: {name: b, namespace: a}
roleRef: {kind: Role, name: r}
subjects: [{kind: ServiceAccount, name: s, namespace: a}]
`).map((d) => d.toJS() as Record<string, unknown>);
    const policy = policyFrom(docs, 'test', true);
    const who = { user: 'system:serviceaccount:a:s', groups: ['system:serviceaccounts'] };
    assert.ok(
      rbacAllows(policy, who, {
        verb: 'create',
        group: '',
        resource: 'serviceaccounts/token',
        namespace: 'a',
        name: 'x',
      }),
    );
    assert.equal(
      rbacAllows(policy, who, {
        verb: 'create',
        group: '',
        resource: 'serviceaccounts/token',
        namespace: 'a',
        name: 'y',
      }),
      undefined,
    );
    assert.equal(
      rbacAllows(policy, who, {
        verb: 'create',
        group: '',
        resource: 'serviceaccounts/token',
        namespace: 'b',
        name: 'x',
      }),
      undefined,
    );
    assert.ok(rbacAllows(policy, who, { verb: 'get', group: '', resource: 'pods/log', namespace: 'a' }));
    assert.equal(
      rbacAllows(
        policy,
        { user: 'system:serviceaccount:a:t', groups: [] },
        { verb: 'get', group: '', resource: 'pods/log', namespace: 'a' },
      ),
      undefined,
    );
  });
});

describe('secrets by host', () => {
  it('the cluster CA key goes to control-plane nodes only; Windows nodes never call TokenRequest', () => {
    for (const shape of SHAPES) {
      const { plan, files } = planFor(shape);
      const controlPlane = new Set(plan.nodes.filter((n) => n.role === 'control-plane').map((n) => n.name));
      for (const t of plan.tasks.filter((x) => x.secrets.includes('cluster-ca-key')))
        assert.ok(controlPlane.has(t.host), `${t.id} receives the CA key`);
      const windows = new Set(plan.nodes.filter((n) => n.osFamily === 'windows').map((n) => n.name));
      for (const f of files.filter((x) => windows.has(x.node)))
        assert.doesNotMatch(f.content, /serviceaccounts\/[^/]+\/token/, f.remotePath);
    }
  });
});

describe('docs/windows.md', () => {
  const docs = readFileSync(join(REPO, 'docs', 'windows.md'), 'utf8');
  const table = (name: string): string => {
    const m = new RegExp(`<!-- audit-table: ${name} -->\\n([\\s\\S]*?)<!-- /audit-table -->`).exec(docs);
    assert.ok(m !== null, `docs/windows.md has the ${name} audit table`);
    return m[1] ?? '';
  };
  it('shows the audit of examples/k8s-libvirt-1-1-1.yaml (with the guard) exactly as kubemix computes it', () => {
    assert.equal(
      table('k8s-libvirt-1-1-1'),
      auditSummaryMarkdown(auditPlan(planFor('k8s-libvirt-1-1-1'), { extra: guardAudit('kubemix-guard', true) })),
    );
  });
  it("and with the spec's own HostProcess images", () => {
    assert.equal(table('hostprocess'), auditSummaryMarkdown(auditPlan(assemblePlan(comboModel(HOSTPROCESS)))));
  });
});
