import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidSpecError } from '../../errors.js';
import { resolveModel } from '../../model/resolve.js';
import { readSpec } from '../../spec/read.js';
import { assemblePlan } from '../assemble.js';
import type { ClusterModel } from '../../model/resolve.js';
import { driverContribution } from './driver.js';

const cleanupTasks = (m: ClusterModel) =>
  driverContribution(m).tasks.filter((t) => t.stage === 'task-cleanup-hypervisors');

const model = (spec: string, hypervisors?: string) => resolveModel(readSpec({ kind: 'kubeinit', spec, hypervisors }));

test('one cleanup task per hypervisor, keeping only the guests placed on it', () => {
  const tasks = cleanupTasks(model('k8s-libvirt-1-2-2', 'a,b'));
  assert.deepEqual(
    tasks.map((t) => t.id),
    ['task-cleanup-hypervisors/hypervisor-01/leftovers', 'task-cleanup-hypervisors/hypervisor-02/leftovers'],
  );
  const keep = (i: number) => /^keep_domains='([^']*)'$/m.exec(tasks[i]?.apply.script ?? '')?.[1]?.split('\n');
  assert.deepEqual(keep(0), ['compute-02.k8scluster.kubeinit.local', 'controller-01.k8scluster.kubeinit.local']);
  assert.deepEqual(keep(1), ['compute-01.k8scluster.kubeinit.local', 'service-01.k8scluster.kubeinit.local']);
  for (const t of tasks) {
    assert.deepEqual(t.after, [`task-gather-facts/${t.host}/facts`]);
    assert.deepEqual(t.secrets, []);
    assert.doesNotMatch(`${t.check?.script}${t.apply.script}`, /\{\{secret:/);
    assert.match(t.apply.script, /^uri=qemu:\/\/\/system$/m);
  }
});

test('the capacity check waits for cleanup: disk freed by leftovers counts', () => {
  const { plan } = assemblePlan(model('k8s-libvirt-1-1-1'));
  const capacity = plan.tasks.find((t) => t.id === 'task-run-validations/hypervisor-01/capacity');
  assert.ok(capacity?.after.includes('task-cleanup-hypervisors/hypervisor-01/leftovers'));
});

test('existing hosts get no cleanup task: kubemix created nothing there', () => {
  assert.deepEqual(cleanupTasks(model('k8s-existing-1-1-1')), []);
});

test('a libvirt URI with quotes or shell characters is refused at the spec boundary, with its path', () => {
  assert.throws(
    () =>
      readSpec({
        kind: 'file',
        path: 'x.yaml',
        text: `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: { name: lab }
spec:
  infrastructure:
    driver: libvirt
    hypervisors: [{ name: hv, address: hv.example.com, libvirtUri: "qemu+ssh://root@hv/system?keyfile=/k/it's;rm" }]
`,
      }),
    (e: unknown) =>
      e instanceof InvalidSpecError &&
      e.diagnostics.some((d) => d.path === 'spec.infrastructure.hypervisors[0].libvirtUri'),
  );
});

test('the libvirt URI is one quoted shell word whatever it holds (past the boundary too)', () => {
  const m = model('k8s-libvirt-1-1-1');
  const hostile = "qemu+ssh://root@hv/system?keyfile=/k/it's;rm";
  const hypervisors = m.hypervisors.map((h) => ({ ...h, libvirtUri: hostile }));
  const [t] = cleanupTasks({ ...m, hypervisors });
  assert.match(t?.apply.script ?? '', /^uri='qemu\+ssh:\/\/root@hv\/system\?keyfile=\/k\/it'\\''s;rm'$/m);
});
