// kubeadm configs against a strict schema of the v1beta4 types; every
// cluster manifest object against the Kubernetes OpenAPI schemas
// (kubernetes-models), plus the facts flannel and Windows scheduling need.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { SHAPES, planFor } from './helpers/shapes.js';
import { KUBEADM_SCHEMAS } from './helpers/kubeadm-schema.js';
import { CALICO_API_VERSIONS, CALICO_SCHEMAS } from './helpers/calico-schema.js';

type Obj = Record<string, unknown>;
const docsOf = (text: string): Obj[] => parseAllDocuments(text).map((d) => d.toJS() as Obj);

/** kubernetes-models' class for an apiVersion/kind. */
async function modelClass(apiVersion: string, kind: string): Promise<new (o: Obj) => { validate(): void }> {
  const modules: Record<string, () => Promise<Record<string, unknown>>> = {
    v1: () => import('kubernetes-models/v1'),
    'apps/v1': () => import('kubernetes-models/apps/v1'),
    'rbac.authorization.k8s.io/v1': () => import('kubernetes-models/rbac.authorization.k8s.io/v1'),
    'node.k8s.io/v1': () => import('kubernetes-models/node.k8s.io/v1'),
    'admissionregistration.k8s.io/v1': () => import('kubernetes-models/admissionregistration.k8s.io/v1'),
  };
  const load = modules[apiVersion];
  assert.ok(load !== undefined, `no schema module for ${apiVersion}`);
  const cls = (await load())[kind];
  assert.equal(typeof cls, 'function', `no schema for ${apiVersion} ${kind}`);
  return cls as new (o: Obj) => { validate(): void };
}

for (const shape of SHAPES) {
  describe(`kubeadm and manifests of ${shape}`, () => {
    const { plan, files } = planFor(shape);

    it('kubeadm configs match the v1beta4 schema: init on the first controller, join elsewhere', () => {
      const configs = files.filter((f) => f.remotePath.startsWith('/etc/kubemix/kubeadm/'));
      const linux = plan.nodes.filter((n) => n.osFamily === 'linux' && n.role !== 'services');
      assert.equal(configs.length, linux.length);
      for (const f of configs) {
        assert.equal(f.mode, '0600');
        const docs = docsOf(f.content);
        for (const d of docs) {
          const schema = KUBEADM_SCHEMAS[String(d.kind)];
          assert.ok(schema !== undefined, `${f.localPath}: unexpected kind ${String(d.kind)}`);
          const r = schema.safeParse(d);
          assert.ok(r.success, `${f.localPath} ${String(d.kind)}: ${r.error?.message}`);
        }
        const kinds = docs.map((d) => d.kind);
        assert.deepEqual(
          kinds,
          f.node === linux[0]?.name
            ? ['InitConfiguration', 'ClusterConfiguration', 'KubeletConfiguration']
            : ['JoinConfiguration'],
        );
      }
    });

    it('every manifest object validates against the Kubernetes OpenAPI schemas (CRDs: our zod schemas)', async () => {
      const manifests = files.filter((f) => f.node === 'cluster');
      assert.ok(manifests.some((m) => m.localPath === `artifacts/cluster/manifests/${plan.cluster.cni.plugin}.yaml`));
      for (const m of manifests) {
        for (const o of docsOf(m.content)) {
          if (CALICO_API_VERSIONS.has(String(o.apiVersion))) {
            const schema = CALICO_SCHEMAS[String(o.kind)];
            assert.ok(schema !== undefined, `${m.localPath}: no schema for ${String(o.kind)}`);
            const r = schema.safeParse(o);
            assert.ok(r.success, `${m.localPath} ${String(o.kind)}: ${r.error?.message}`);
            continue;
          }
          const Model = await modelClass(String(o.apiVersion), String(o.kind));
          assert.doesNotThrow(() => new Model(o).validate(), `${m.localPath}: ${String(o.kind)}`);
        }
      }
    });

    it('flannel: vxlan VNI 4096 / port 4789, DaemonSet only on Linux', () => {
      if (plan.cluster.cni.plugin !== 'flannel')
        return assert.equal(
          files.some((f) => f.localPath.includes('flannel')),
          false,
        );
      const docs = docsOf(files.find((f) => f.localPath === 'artifacts/cluster/manifests/flannel.yaml')?.content ?? '');
      const cm = docs.find((d) => d.kind === 'ConfigMap') as { data: Record<string, string> };
      const net = JSON.parse(cm.data['net-conf.json'] ?? '{}') as { Network: string; Backend: Obj };
      assert.deepEqual(net.Backend, { Type: 'vxlan', VNI: 4096, Port: 4789 });
      assert.equal(net.Network, plan.cluster.network.podCidr);
      const ds = docs.find((d) => d.kind === 'DaemonSet') as { spec: { template: { spec: { nodeSelector: Obj } } } };
      assert.deepEqual(ds.spec.template.spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    });

    it('one RuntimeClass per Windows build, only with Windows nodes', () => {
      const rc = files.find((f) => f.localPath === 'artifacts/cluster/manifests/windows-runtimeclasses.yaml');
      const builds = [...new Set(plan.nodes.flatMap((n) => (n.windowsBuild === undefined ? [] : [n.windowsBuild])))];
      if (builds.length === 0) return assert.equal(rc, undefined);
      const docs = docsOf(rc?.content ?? '') as { scheduling: { nodeSelector: Obj; tolerations: Obj[] } }[];
      assert.deepEqual(
        docs.map((d) => d.scheduling.nodeSelector['node.kubernetes.io/windows-build']),
        builds,
      );
      for (const d of docs)
        assert.deepEqual(d.scheduling.tolerations, [
          { key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' },
        ]);
    });
  });
}
