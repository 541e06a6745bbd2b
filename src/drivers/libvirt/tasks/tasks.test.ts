import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModel } from '../../../model/resolve.js';
import { assemblePlan } from '../../../plan/assemble.js';
import { STAGES } from '../../../plan/types.js';
import { readSpec } from '../../../spec/read.js';

const plan = (spec: string, nodes?: string) =>
  assemblePlan(resolveModel(readSpec({ kind: 'kubeinit', spec, ...(nodes === undefined ? {} : { nodes }) }))).plan;

test('k8s-libvirt-1-1-1 with a Windows compute: the hypervisor is prepared and every guest created and awaited', () => {
  const p = plan('k8s-libvirt-1-1-1', '[[when_group=compute_nodes,os=windows]]');
  const ids = p.tasks.map((t) => t.id);
  for (const id of [
    'task-prepare-hypervisors/hypervisor-01/libvirt',
    'task-prepare-hypervisors/hypervisor-01/pool',
    'task-prepare-hypervisors/hypervisor-01/domain-type',
    'task-create-network/hypervisor-01/network',
    'task-create-network/hypervisor-01/guest-service-01',
    'task-create-network/hypervisor-01/guest-controller-01',
    'task-create-network/hypervisor-01/guest-compute-01',
    'task-create-network/hypervisor-01/ssh-compute-01',
  ])
    assert.ok(ids.includes(id), id);
  // The two stages that planned nothing for libvirt now plan the hypervisor and its guests.
  for (const stage of ['task-prepare-hypervisors', 'task-create-network'] as const)
    assert.ok(
      p.tasks.some((t) => t.stage === stage && STAGES.includes(stage)),
      stage,
    );
  // The services guest answers first; every other guest waits for it.
  const guest = p.tasks.find((t) => t.id === 'task-create-network/hypervisor-01/guest-controller-01');
  assert.ok(guest?.after.includes('task-create-network/hypervisor-01/ssh-service-01'));
  // A Windows guest's own first tasks wait until it answered with its pinned key and its media are gone.
  for (const t of p.tasks.filter((t) => t.host === 'compute-01' && !t.after.some((a) => a.includes('/compute-01/'))))
    assert.deepEqual(t.after, ['task-create-network/hypervisor-01/eject-compute-01'], t.id);
  // Its install: ISOs cached, guest created, Setup awaited, SSH awaited, then (never before) the media ejected.
  const byId = new Map(p.tasks.map((t) => [t.id, t]));
  const at = (name: string) => byId.get(`task-create-network/hypervisor-01/${name}`) ?? assert.fail(name);
  const win = at('guest-compute-01');
  for (const image of ['windows-2022', 'virtio-win'])
    assert.ok(win.after.includes(`task-prepare-hypervisors/hypervisor-01/image-${image}`), image);
  assert.deepEqual(at('setup-compute-01').after, [win.id]);
  assert.deepEqual(at('ssh-compute-01').after, [at('setup-compute-01').id]);
  assert.deepEqual(at('eject-compute-01').after, [at('ssh-compute-01').id]);
  // The unattend files go to the hypervisor only with the guest task that builds the media from them.
  assert.equal(win.uploadsOnApply, true);
  const media = win.uploads.map((u) => u.artifact).filter((a) => a.includes('/unattend/'));
  assert.deepEqual(
    media.map((a) => a.slice(a.indexOf('/unattend/') + 10)),
    ['Autounattend.xml', 'kubemix/SetupComplete.cmd', 'kubemix/kubemix-setup.ps1'],
  );
  assert.deepEqual(win.secrets, ['cluster-ssh-public-key', 'ssh-host-key-compute-01', 'windows-admin-password']);
  assert.ok(
    p.tasks.every((t) => t === win || t.uploads.every((u) => !u.artifact.includes('/unattend/'))),
    'no other task places them',
  );
  // Host keys are secret references, never key material, in the plan.
  assert.doesNotMatch(JSON.stringify(p), /PRIVATE KEY/);
});

test('a hypervisor with a fixed domain type gets no KVM probe and only that domain definition', () => {
  const spec = readSpec({
    kind: 'file',
    path: 'x.yaml',
    text: `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: { name: lab }
spec:
  infrastructure:
    driver: libvirt
    hypervisors: [{ name: hv, address: 127.0.0.1, domainType: qemu }]
`,
  });
  const { plan: p, files } = assemblePlan(resolveModel(spec));
  const probe = p.tasks.find((t) => t.id === 'task-prepare-hypervisors/hv/domain-type');
  assert.doesNotMatch(probe?.apply.script ?? '', /probe_kvm/);
  assert.ok(files.every((f) => !/domain-kvm\.xml$|kvm-probe\.xml$/.test(f.remotePath)));
  assert.ok(files.some((f) => /domain-qemu\.xml$/.test(f.remotePath)));
});

test('two hypervisors: each joins the VXLAN mesh; guests are reached and awaited from the gateway hypervisor', () => {
  const model = resolveModel(readSpec({ kind: 'kubeinit', spec: 'k8s-libvirt-3-0-2', hypervisors: 'hv1,hv2' }));
  const p = assemblePlan(model).plan;
  const byId = new Map(p.tasks.map((t) => [t.id, t]));
  const overlay = (hv: string) => byId.get(`task-create-network/${hv}/overlay`) ?? assert.fail(hv);
  // The gateway's bridge is its libvirt network's: the link joins it after; elsewhere the bridge comes first.
  assert.ok(overlay('hypervisor-01').after.includes('task-create-network/hypervisor-01/network'));
  assert.ok(byId.get('task-create-network/hypervisor-02/network')?.after.includes(overlay('hypervisor-02').id));
  assert.match(overlay('hypervisor-02').description, /UDP 64789, MTU 1450/);
  assert.equal(model.cluster.network.nodeMtu, 1450);
  for (const n of model.nodes) {
    assert.ok(byId.has(`task-create-network/hypervisor-01/ssh-${n.name}`), n.name);
    const host = model.hosts.find((h) => h.name === n.name);
    assert.equal(host?.bastion?.address, 'hv1', `${n.name} is reached through the gateway hypervisor`);
  }
  // A guest on the second hypervisor is created there, after its end of the mesh.
  const guest = p.tasks.find((t) => t.id.startsWith('task-create-network/hypervisor-02/guest-')) ?? assert.fail();
  assert.ok(guest.after.includes('task-create-network/hypervisor-02/overlay'));
});
