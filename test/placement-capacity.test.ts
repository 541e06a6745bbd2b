// The hypervisor capacity check runs per hypervisor over the guests placed
// there, pins included, and a refusal names the hypervisor and its guests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';

const text = stringify({
  apiVersion: 'kubemix.dev/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'k8scluster' },
  spec: {
    infrastructure: {
      driver: 'libvirt',
      hypervisors: [
        { name: 'hypervisor-01', address: 'hv1.example.com' },
        { name: 'hypervisor-02', address: 'hv2.example.com' },
      ],
    },
    nodes: {
      controlPlane: { count: 1 },
      workers: [{ name: 'big', count: 2, os: 'debian-13', ram: '64Gi', disk: '500Gi', hypervisor: 'hypervisor-02' }],
      placement: { 'controller-01': 'hypervisor-02' },
    },
    services: { hypervisor: 'hypervisor-01' },
  },
});

const tasks = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'c.yaml', text }))).plan.tasks;
const capacity = (hv: string) => tasks.find((t) => t.id === `task-run-validations/${hv}/capacity`) ?? assert.fail();

test('the pinned guests are what the pinned hypervisor is checked for', () => {
  // 2 × 64 GiB + 8 GiB controller = 139264 MiB, × 1.1 headroom.
  assert.match(capacity('hypervisor-02').apply.script, /^need_ram=153191$/m);
  assert.match(capacity('hypervisor-02').description, /for controller-01, big-01, big-02$/);
  assert.match(capacity('hypervisor-01').description, /for service-01$/);
});

test('pinned nodes that do not fit: refused, naming the hypervisor and its guests (run)', () => {
  const script = capacity('hypervisor-02')
    .apply.script.replace(/^have_ram=.*$/m, 'have_ram=65536')
    .replace(/^have_disk=.*$/m, 'have_disk=2000');
  const run = spawnSync('sh', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^hypervisor-02: 65536 MiB RAM, its 3 guests need 153191 MiB/m);
  assert.match(
    run.stderr,
    /^hypervisor-02 guests: controller-01, big-01, big-02; move some with spec\.nodes\.placement/m,
  );
  const fits = script.replace(/^have_ram=.*$/m, 'have_ram=200000').replace(/^have_cpus=.*$/m, 'have_cpus=64');
  assert.equal(spawnSync('sh', ['-c', fits], { encoding: 'utf8', timeout: 30_000 }).status, 0);
});

test('CPUs: a guest wider than the hypervisor, or more than 16 vCPUs per CPU in all, is refused (run)', () => {
  const script = capacity('hypervisor-02')
    .apply.script.replace(/^have_ram=.*$/m, 'have_ram=200000')
    .replace(/^have_disk=.*$/m, 'have_disk=2000');
  const vcpus = Number(/^need_vcpus=(\d+)$/m.exec(script)?.[1]);
  const widest = Number(/^widest=(\d+)$/m.exec(script)?.[1]);
  assert.ok(vcpus > widest && widest > 1, `${vcpus} vCPUs, widest ${widest}`);
  const run = (cpus: number) =>
    spawnSync('sh', ['-c', script.replace(/^have_cpus=.*$/m, `have_cpus=${cpus}`)], { encoding: 'utf8' });
  const narrow = run(widest - 1);
  assert.equal(narrow.status, 1);
  assert.match(
    narrow.stderr,
    new RegExp(`^hypervisor-02: ${widest - 1} CPUs online, .* would get ${widest} vCPUs`, 'm'),
  );
  assert.equal(run(widest).status, vcpus <= widest * 16 ? 0 : 1);
  const many = script.replace(/^need_vcpus=.*$/m, `need_vcpus=${widest * 16 + 1}`);
  const over = spawnSync('sh', ['-c', many.replace(/^have_cpus=.*$/m, `have_cpus=${widest}`)], { encoding: 'utf8' });
  assert.equal(over.status, 1);
  assert.match(
    over.stderr,
    new RegExp(`its guests get ${widest * 16 + 1} vCPUs, more than 16 per CPU of its ${widest}`),
  );
});
