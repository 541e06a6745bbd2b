import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSpec } from '../spec/read.js';
import { resolveModel } from './resolve.js';
import { placeOnHypervisors } from './placement.js';
import { macFor, assignMacs } from './mac.js';

const model = (spec: string, nodes?: string, hypervisors?: string) =>
  resolveModel(readSpec({ kind: 'kubeinit', spec, nodes, hypervisors }));

test('addresses: controllers first, then workers, services below the gateway', () => {
  const m = model('k8s-libvirt-3-2-1');
  assert.deepEqual(
    m.nodes.map((n) => `${n.name}=${n.ip}`),
    [
      'controller-01=10.0.0.1',
      'controller-02=10.0.0.2',
      'controller-03=10.0.0.3',
      'compute-01=10.0.0.4',
      'compute-02=10.0.0.5',
      'service-01=10.0.0.253',
    ],
  );
  assert.equal(m.cluster.network.gateway, '10.0.0.254');
  assert.equal(m.cluster.apiEndpoint.address, '10.0.0.253');
});

test('placement: control plane from the first hypervisor, services on the last, workers round robin from the second', () => {
  const m = model('k8s-libvirt-1-2-2', undefined, 'a,b');
  const on = Object.fromEntries(m.nodes.map((n) => [n.name, n.hypervisor]));
  assert.deepEqual(on, {
    'controller-01': 'hypervisor-01',
    'compute-01': 'hypervisor-02',
    'compute-02': 'hypervisor-01',
    'service-01': 'hypervisor-02',
  });
  const single = placeOnHypervisors(
    [
      { name: 'w1', role: 'worker' },
      { name: 'w2', role: 'worker' },
    ],
    ['only'],
  );
  assert.deepEqual([...single.values()], ['only', 'only']);
});

test('MACs are stable, in 52:54:00, and unique', () => {
  assert.equal(macFor('k8scluster', 'controller-01'), macFor('k8scluster', 'controller-01'));
  assert.notEqual(macFor('k8scluster', 'controller-01'), macFor('other', 'controller-01'));
  const names = Array.from({ length: 3000 }, (_, i) => `compute-${i}`);
  const macs = [...assignMacs('big', names).values()];
  assert.equal(new Set(macs).size, names.length);
  assert.ok(macs.every((m) => /^52:54:00(:[0-9a-f]{2}){3}$/.test(m)));
});

test('MTU: the VXLAN mesh across hypervisors gives nodes 1450 and VXLAN pods 1400', () => {
  const multi = model('k8s-libvirt-1-1-2');
  assert.equal(multi.cluster.network.nodeMtu, 1450);
  assert.equal(multi.cluster.network.podMtu, 1400);
  const single = model('k8s-libvirt-1-1-1');
  assert.equal(single.cluster.network.podMtu, 1450);
});

test('pod CIDRs are marked as predictions, services node has none', () => {
  const m = model('k8s-libvirt-1-1-1');
  assert.deepEqual(
    m.nodes.map((n) => n.podCidr),
    [{ cidr: '10.244.0.0/24', predicted: true }, { cidr: '10.244.1.0/24', predicted: true }, undefined],
  );
});

test('taints: Windows workers os=windows:NoSchedule; control plane untainted without Linux workers', () => {
  const mixed = model('k8s-libvirt-1-2-1', '[[when_group=compute_nodes,os=windows]]');
  assert.deepEqual(
    mixed.nodes.map((n) => [n.name, n.taints.join(',')]),
    [
      ['controller-01', ''],
      ['compute-01', 'os=windows:NoSchedule'],
      ['compute-02', 'os=windows:NoSchedule'],
      ['service-01', ''],
    ],
  );
  const linux = model('k8s-libvirt-1-1-1');
  assert.deepEqual(linux.nodes[0]?.taints, ['node-role.kubernetes.io/control-plane:NoSchedule']);
});

test('versions resolve minors to the pinned patch', () => {
  const m = model('k8s-libvirt-1-1-1');
  assert.equal(m.versions.kubernetes, '1.36.3');
  assert.equal(m.versions.containerd, '2.3.2');
});

test('guests are reached through their hypervisor with the cluster key; hypervisors as given', () => {
  const m = model('k8s-libvirt-1-1-1', '[[when_group=compute_nodes,os=windows]]', 'hv.example.com');
  const win = m.hosts.find((h) => h.name === 'compute-01');
  assert.equal(win?.shell, 'powershell');
  assert.equal(win?.user, 'Administrator');
  assert.equal(win?.provisioner, 'kubemix');
  assert.equal(win?.bastion?.address, 'hv.example.com');
  assert.equal(m.hosts.find((h) => h.name === 'hypervisor-01')?.provisioner, 'user');
});
