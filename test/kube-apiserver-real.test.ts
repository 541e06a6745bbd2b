// Every bundled example against a real control plane (etcd, kube-apiserver and
// kube-controller-manager v1.36.3 built here, started by kubeadm's own
// manifests: test/helpers/kube-control-plane.ts), a fresh one per example:
// - every manifest the plan applies, and `kubemix guard install`'s output,
//   server-side applied as kubemix applies them (fieldManager kubemix, force,
//   fieldValidation Strict): dry-run first, then for real. A rejection or a
//   warning fails. Calico's custom resources go in after Calico's CRDs
//   (test/fixtures/calico/crds.json, from projectcalico/calico v3.32.1
//   manifests/operator-crds.yaml);
// - the authorization audit (`plan --audit`): with kubeadm's bootstrap RBAC
//   (kubeadm init phase upload-config, bootstrap-token and addon, run against
//   this API server), the plan's manifests and guard's, the plan's nodes as
//   Node objects and on each a pod with a Secret, a ConfigMap and its
//   ServiceAccount (what a kubelet's Node-authorizer graph reaches), every
//   (credential, request) decision the audit makes is asked as a
//   SubjectAccessReview; one answer otherwise fails the test;
// - the Windows flanneld pointed back at kubelet.conf: the audit and the API
//   server both deny what it needs.
// Calico for Windows: the tigera operator does not run here, so the RBAC it
// would create is applied as src/audit/calico.ts transcribes it (checked: the
// API server's evaluation of those roles, not the transcription itself).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { auditPlan, guardAudit, type AuditResult } from '../src/audit/index.js';
import { calicoPolicy } from '../src/audit/calico.js';
import { calicoWindows } from '../src/audit/components.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../src/plan/assemble.js';
import { WIN } from '../src/render/windows/paths.js';
import { readSpec } from '../src/spec/read.js';
import { askEach, type NodeObjects, type Obj } from './helpers/audit-sar.js';
import { repoPath, runCli } from './helpers/cli.js';
import { startControlPlane, type ControlPlane } from './helpers/kube-control-plane.js';
import { scratch } from './helpers/shapes.js';
import { modelFor as comboModel } from './windows/fixtures.js';

const EXAMPLES = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
const CALICO_CRDS = (
  JSON.parse(readFileSync(repoPath('test', 'fixtures', 'calico', 'crds.json'), 'utf8')) as {
    crds: Obj[];
  }
).crds;
const GUARD_NAMESPACE = 'kubemix-guard';
const WORKLOADS = 'kubemix-audit';

interface Case {
  readonly name: string;
  readonly assembled: AssembledPlan;
  /** The spec file `guard install --cluster` reads. */
  readonly spec: string | undefined;
}

function exampleCase(name: string): Case {
  const path = repoPath('examples', `${name}.yaml`);
  return {
    name,
    assembled: assemblePlan(resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }))),
    spec: path,
  };
}

const CASES: Case[] = [
  ...EXAMPLES.map(exampleCase),
  // flanneld and kube-proxy as HostProcess pods: their own projected tokens (not in the examples).
  {
    name: 'windows-hostprocess (test/windows/fixtures.ts)',
    assembled: assemblePlan(comboModel({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan', hostProcess: true })),
    spec: undefined,
  },
];

const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);

const describeObj = (o: Obj): string =>
  `${String(o['kind'])} ${o['metadata']?.['namespace'] === undefined ? '' : `${String(o['metadata']['namespace'])}/`}${String(o['metadata']?.['name'])}`;

/** The manifests in the order the plan applies them: its `kubectl apply --server-side -f` lines. */
function planManifests(p: AssembledPlan): { file: string; objects: Obj[] }[] {
  const order = p.plan.tasks.flatMap((t) =>
    [...t.apply.script.matchAll(/ apply --server-side --force-conflicts -f \/etc\/kubemix\/(manifests\/\S+)/g)].map(
      (m) => m[1] ?? '',
    ),
  );
  const files = p.files.filter((f) => f.node === 'cluster' && f.remotePath.startsWith('manifests/'));
  assert.deepEqual(
    [...order].sort(),
    files.map((f) => f.remotePath).sort(),
    'the plan applies every manifest it ships',
  );
  return order.map((path) => ({ file: path, objects: docs(files.find((f) => f.remotePath === path)?.content ?? '') }));
}

/** Server-side dry-run, then the apply itself; both must be accepted without a warning. */
async function applyBoth(cp: ControlPlane, o: Obj, where: string): Promise<void> {
  for (const dryRun of [true, false]) {
    const r = await cp.apply(o, dryRun);
    const what = `${where}: ${describeObj(o)}${dryRun ? ' (dry-run)' : ''}`;
    assert.ok(
      r.status === 200 || r.status === 201,
      `${what}: HTTP ${r.status} ${JSON.stringify(r.body?.['message'] ?? r.body)}`,
    );
    assert.deepEqual(r.warnings, [], what);
  }
}

async function established(cp: ControlPlane, crd: string): Promise<void> {
  await cp.until(`CRD ${crd} Established`, async () => {
    const r = await cp.call('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
    return ((r.body?.['status']?.['conditions'] ?? []) as Obj[]).some(
      (c) => c['type'] === 'Established' && c['status'] === 'True',
    );
  });
}

async function created(cp: ControlPlane, path: string, body: Obj): Promise<void> {
  const r = await cp.call('POST', path, body);
  assert.equal(r.status, 201, `${describeObj(body)}: ${JSON.stringify(r.body?.['message'] ?? r.body)}`);
}

/**
 * The plan's nodes as Node objects (as the kubelets register them), and on
 * each a pod with a Secret, a ConfigMap and a ServiceAccount: the objects
 * its kubelet may read through the Node authorizer's graph.
 */
async function deployedNodes(cp: ControlPlane, p: AssembledPlan): Promise<Map<string, NodeObjects>> {
  const graph = new Map<string, NodeObjects>();
  const ns = WORKLOADS;
  await created(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await created(cp, `/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'workload' },
  });
  await created(cp, `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'workload' },
    stringData: { k: 'v' },
  });
  await created(cp, `/api/v1/namespaces/${ns}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'workload' },
    data: { k: 'v' },
  });
  for (const n of p.plan.nodes.filter((x) => x.role !== 'services')) {
    const name = n.name.toLowerCase();
    const os = n.osFamily;
    await created(cp, '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/os': os,
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/hostname': name,
          ...(n.windowsBuild === undefined ? {} : { 'node.kubernetes.io/windows-build': n.windowsBuild }),
        },
      },
    });
    const pod = `workload-${name}`;
    await created(cp, `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod },
      spec: {
        nodeName: name,
        os: { name: os },
        serviceAccountName: 'workload',
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            volumeMounts: [
              { name: 's', mountPath: '/s' },
              { name: 'c', mountPath: '/c' },
            ],
          },
        ],
        volumes: [
          { name: 's', secret: { secretName: 'workload' } },
          { name: 'c', configMap: { name: 'workload' } },
        ],
      },
    });
    const ref = (n2: string) => ({ namespace: ns, name: n2 });
    graph.set(name, {
      pod: ref(pod),
      secret: ref('workload'),
      configMap: ref('workload'),
      serviceAccount: ref('workload'),
    });
  }
  // The Node authorizer learns pods from an informer: wait until every node's kubelet may read its pod's Secret.
  for (const node of graph.keys())
    await cp.until(
      `the Node authorizer's graph holds ${node}'s pod`,
      async () => {
        const r = await cp.call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: `system:node:${node}`,
            groups: ['system:nodes', 'system:authenticated'],
            resourceAttributes: { verb: 'get', resource: 'secrets', namespace: ns, name: 'workload' },
          },
        });
        return r.body?.['status']?.['allowed'] === true;
      },
      30_000,
    );
  return graph;
}

const errorsOf = (r: AuditResult): string[] =>
  r.findings.filter((f) => f.severity === 'error').map((f) => `${f.credential}: ${f.message}`);

const tmp = scratch('kube-apiserver-real');
after(() => tmp.remove());

for (const c of CASES) {
  describe(`${c.name} on a real API server (v1.36.3 built here)`, () => {
    let cp: ControlPlane;
    let graph: Map<string, NodeObjects>;
    const guardOut = join(tmp.dir, c.name.replace(/[^\w.-]/g, '_'));

    before(async () => {
      cp = await startControlPlane({ name: c.name.replace(/[^\w.-]/g, '_') });
      // kubeadm's own bootstrap objects, made by kubeadm against this API server.
      for (const phase of [['upload-config', 'all'], ['bootstrap-token'], ['addon', 'all']]) {
        const r = await cp.kubeadm(['init', 'phase', ...phase, '--config', cp.kubeadmConfig]);
        assert.equal(r.code, 0, `kubeadm init phase ${phase.join(' ')}: ${r.stderr}`);
      }
      // The nodes and their pods first, as in a cluster that runs: guard's webhook, applied below, would
      // refuse new pods while no guard serves it (failurePolicy Fail; the fixture routes no egress).
      graph = await deployedNodes(cp, c.assembled);
    });
    after(async () => {
      await cp?.stop();
    });

    it('every manifest the plan applies: server-side dry-run, then applied, none refused or warned about', async () => {
      const manifests = planManifests(c.assembled);
      assert.ok(manifests.length > 0);
      const kinds = new Set(manifests.flatMap((m) => m.objects.map((o) => String(o['apiVersion']))));
      if ([...kinds].some((k) => k.includes('projectcalico.org') || k.includes('tigera.io'))) {
        // What the calico-operator task applies before: the CRDs, and tigera-operator.yaml's namespace.
        for (const crd of CALICO_CRDS) await applyBoth(cp, crd, 'Calico operator-crds.yaml');
        for (const crd of CALICO_CRDS) await established(cp, String(crd['metadata']['name']));
        await applyBoth(
          cp,
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tigera-operator' } },
          'Calico tigera-operator.yaml',
        );
      }
      for (const m of manifests) for (const o of m.objects) await applyBoth(cp, o, m.file);
      for (const m of manifests)
        for (const o of m.objects) {
          const back = await cp.call('GET', await cp.pathOf(o));
          assert.equal(back.status, 200, `${m.file}: ${describeObj(o)} is there`);
        }
    });

    it('guard install: its manifests server-side dry-run, then applied', async () => {
      const args = [
        'guard',
        'install',
        '--cluster',
        c.spec ?? 'k8s-libvirt-1-1-1',
        '--ca-cert',
        cp.caCertPath,
        '--ca-key',
        cp.caKeyPath,
        '--out',
        guardOut,
        '--namespace',
        GUARD_NAMESPACE,
      ];
      const r = await runCli(args);
      assert.equal(r.code, 0, r.stderr);
      for (const f of ['secret.yaml', 'guard.yaml'])
        for (const o of docs(readFileSync(join(guardOut, f), 'utf8'))) await applyBoth(cp, o, `guard install ${f}`);
    });

    it('the authorization audit agrees with the API server on every decision (SubjectAccessReview)', async () => {
      if (calicoWindows(c.assembled))
        for (const o of [...calicoPolicy().roles, ...calicoPolicy().bindings].map(toObject))
          await applyBoth(cp, o, 'src/audit/calico.ts');
      const result = auditPlan(c.assembled, { extra: guardAudit(GUARD_NAMESPACE, true) });
      assert.deepEqual(errorsOf(result), []);
      const { asked, disagreements } = await askEach(cp, result.components, graph);
      assert.deepEqual(disagreements, []);
      const kinds = new Set(result.components.map((x) => x.component.credential.kind));
      assert.ok(kinds.has('node') && kinds.has('serviceaccount') && kinds.has('admin'), [...kinds].join());
      assert.ok(asked >= 30, `${asked} decisions asked`);
    });

    const service = c.assembled.files.find((f) => f.remotePath === WIN.flanneldServiceXml);
    if (service !== undefined)
      it('flanneld (Windows service) on kubelet.conf: the audit and the API server both deny what it needs', async () => {
        const mutated: AssembledPlan = {
          plan: c.assembled.plan,
          files: c.assembled.files.map((f) =>
            f === service ? { ...f, content: f.content.replace(WIN.flanneldKubeconfig, WIN.kubeletKubeconfig) } : f,
          ),
        };
        const result = auditPlan(mutated, { extra: guardAudit(GUARD_NAMESPACE, true) });
        const flanneld = result.components.filter((x) => x.component.name === 'flanneld (service)');
        assert.ok(flanneld.length > 0 && flanneld.every((x) => x.component.credential.kind === 'node'));
        const denied = flanneld.flatMap((x) =>
          x.decisions.filter((d) => !d.allowed).map((d) => `${d.request.verb} ${d.request.resource}`),
        );
        assert.ok(denied.includes('list nodes') && denied.includes('watch nodes'), denied.join(', '));
        assert.ok(errorsOf(result).some((e) => /flanneld \(service\).*list nodes \(all\) is denied/.test(e)));
        // The API server agrees: denied there too, and every other decision still matches.
        const { disagreements } = await askEach(cp, result.components, graph);
        assert.deepEqual(disagreements, []);
      });
  });
}

/** An RBAC Role/Binding of the audit's model back as a Kubernetes object. */
function toObject(
  x: ReturnType<typeof calicoPolicy>['roles'][number] | ReturnType<typeof calicoPolicy>['bindings'][number],
): Obj {
  const metadata = { name: x.name, ...(x.namespace === undefined ? {} : { namespace: x.namespace }) };
  const base = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: x.kind, metadata };
  if ('rules' in x)
    return {
      ...base,
      rules: x.rules.map((r) => ({
        ...r,
        apiGroups: [...r.apiGroups],
        resources: [...r.resources],
        verbs: [...r.verbs],
      })),
    };
  return {
    ...base,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...x.roleRef },
    subjects: x.subjects.map((s) => ({
      ...s,
      ...(s.kind === 'ServiceAccount' ? {} : { apiGroup: 'rbac.authorization.k8s.io' }),
    })),
  };
}
