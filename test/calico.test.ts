// cni.plugin: calico: the Tigera operator applied (sha256-verified) before our
// custom resources, no flannel anywhere, Typha's port open on firewalld;
// Windows Server 2025 workers refused at validation (Calico for Windows
// supports 2022; the mixed cluster is in calico-windows.test.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { CALICO } from '../src/matrix/index.js';
import { readSpec } from '../src/spec/read.js';
import { planFor } from './helpers/shapes.js';

const DEPLOY = 'task-deploy-cluster/controller-01';

describe('Calico (examples/calico-libvirt-1-1-1.yaml)', () => {
  const { plan, files } = planFor('calico-libvirt-1-1-1');
  const byId = (id: string) => plan.tasks.find((t) => t.id === id);

  it('applies the operator after init and before the cluster manifests, checksum-verified', () => {
    const op = byId(`${DEPLOY}/calico-operator`);
    assert.ok(op !== undefined);
    assert.deepEqual(op.after, [`${DEPLOY}/kubeadm-init`]);
    assert.ok(byId(`${DEPLOY}/cluster-manifests`)?.after.includes(op.id));
    for (const name of CALICO.manifests)
      assert.match(op.apply.script, new RegExp(`/v${CALICO.version}/manifests/${name.replace('.', '\\.')}$`, 'm'));
    assert.match(op.apply.script, /releases\/download\/v[\d.]+\/SHA256SUMS \|/);
    assert.match(op.apply.script, /sha256sum --check --status/);
    assert.ok(op.apply.script.indexOf('operator-crds.yaml') < op.apply.script.indexOf('tigera-operator.yaml'));
  });

  it('counts the operator as applied only at this Calico version and rolled out (both decide the check)', () => {
    const op = byId(`${DEPLOY}/calico-operator`) ?? assert.fail('no calico-operator');
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-calico-check-'));
    // A kubectl that reports `annotation` on the namespace and a finished rollout.
    const checkWith = (annotation: string): number | null => {
      writeFileSync(
        join(dir, 'kubectl'),
        `#!/bin/sh\ncase "$*" in *jsonpath*) printf '${annotation}' ;; esac\nexit 0\n`,
      );
      chmodSync(join(dir, 'kubectl'), 0o755);
      return spawnSync('bash', ['-c', op.check?.script ?? 'exit 9'], {
        env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}` },
      }).status;
    };
    try {
      assert.notEqual(checkWith('3.0.0'), 0, 'an older Calico is not done');
      assert.equal(checkWith(CALICO.version), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders the Installation from the model: pod CIDR, VXLAN, BGP off, MTU, node network, VNI/port, strict affinity', () => {
    const text = files.find((f) => f.localPath === 'artifacts/cluster/manifests/calico.yaml')?.content ?? '';
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, any>);
    assert.deepEqual(
      docs.map((d) => d.kind),
      ['ConfigMap', 'FelixConfiguration', 'IPAMConfig', 'Installation'],
    );
    const inst = docs[3]?.spec;
    assert.equal(inst.calicoNetwork.ipPools[0].cidr, plan.cluster.network.podCidr);
    assert.equal(inst.calicoNetwork.mtu, plan.cluster.network.podMtu);
    assert.deepEqual(inst.calicoNetwork.nodeAddressAutodetectionV4, { cidrs: [plan.cluster.network.nodeCidr] });
    assert.deepEqual(inst.serviceCIDRs, [plan.cluster.network.serviceCidr]);
    assert.deepEqual(docs[1]?.spec, { vxlanVNI: 4096, vxlanPort: 4789 });
    assert.equal(docs[0]?.data.KUBERNETES_SERVICE_HOST, plan.cluster.apiEndpoint.address);
  });

  it('plans no flannel and opens Typha on firewalld', () => {
    assert.equal(
      files.some((f) => f.remotePath.includes('flannel')),
      false,
    );
    assert.equal(
      plan.tasks.some((t) => /flannel/.test(t.name) || /kube-flannel/.test(t.apply.script)),
      false,
    );
    const fw = byId('task-prepare-cluster/compute-01/firewall');
    assert.match(fw?.apply.script ?? '', /--add-port=5473\/tcp/);
  });
});

describe('Calico spec validation', () => {
  const spec = (extra: string) => `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: {name: c}
spec:
  cni: {plugin: calico}
  infrastructure: {driver: libvirt, hypervisors: [{name: hv, address: hv.example.com}]}
${extra}`;
  const codes = (text: string): string[] => {
    try {
      readSpec({ kind: 'file', path: 'c.yaml', text });
      return [];
    } catch (error) {
      return ((error as { diagnostics?: { code: string }[] }).diagnostics ?? []).map((d) => d.code);
    }
  };
  it('accepts Windows Server 2022 workers and refuses 2025 ones, naming the versions and the upstream issue', () => {
    const workers = (os: string) =>
      spec(
        `  nodes: {controlPlane: {count: 1}, workers: [{name: l, count: 1, os: debian-13}, {name: w, count: 1, os: ${os}}]}\n`,
      );
    assert.deepEqual(codes(workers('windows-2022')), []);
    assert.deepEqual(codes(workers('windows-2025')), ['cni.calico-windows-build']);
    try {
      readSpec({ kind: 'file', path: 'c.yaml', text: workers('windows-2025') });
      assert.fail('windows-2025 with Calico was accepted');
    } catch (error) {
      const d = (error as { diagnostics: { path: string; message: string; hint?: string }[] }).diagnostics[0];
      assert.equal(d?.path, 'spec.nodes.workers[1].os');
      assert.match(d?.message ?? '', /Calico 3\.32\.2/);
      assert.match(d?.message ?? '', /Windows Server 2025 \(build 10\.0\.26100\)/);
      assert.match(d?.message ?? '', /projectcalico\/calico#11691/);
      assert.match(d?.hint ?? '', /windows-2022.*plugin: flannel/);
    }
  });
  it('refuses dual-stack pod CIDRs', () => {
    assert.ok(
      codes(spec('  network: {podCidr: "10.244.0.0/16,fd00:10:244::/56"}\n')).includes('cni.calico-dual-stack'),
    );
  });
  it('accepts a Linux-only cluster', () => {
    assert.deepEqual(
      codes(spec('  nodes: {controlPlane: {count: 1}, workers: [{name: w, count: 1, os: debian-13}]}\n')),
      [],
    );
  });
});
