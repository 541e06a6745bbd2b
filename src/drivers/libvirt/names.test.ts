import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bridgeName,
  clusterIdentity,
  domainName,
  networkName,
  ownerMetadata,
  poolName,
  poolPath,
  volumeNames,
  vxlanId,
  vxlanName,
} from './names.js';

test('names derive from cluster and domain: same inputs, same names; another domain, other names', () => {
  const a = clusterIdentity({ name: 'k8scluster', domain: 'kubeinit.local' });
  const b = clusterIdentity({ name: 'k8scluster', domain: 'example.org' });
  assert.equal(a, 'k8scluster.kubeinit.local');
  assert.equal(networkName(a), 'kubemix-k8scluster.kubeinit.local');
  assert.equal(poolName(a), 'kubemix-k8scluster.kubeinit.local');
  assert.equal(poolPath(a), '/var/lib/libvirt/images/kubemix/k8scluster.kubeinit.local');
  assert.equal(bridgeName(a), bridgeName(a));
  assert.notEqual(bridgeName(a), bridgeName(b));
  assert.notEqual(networkName(a), networkName(b));
});

test('bridge names fit Linux interface names (15 characters) and never look like the test harness bridges', () => {
  const longest = clusterIdentity({ name: 'a'.repeat(63), domain: `${'b'.repeat(63)}.${'c'.repeat(63)}` });
  assert.ok(bridgeName(longest).length <= 15);
  assert.match(bridgeName(longest), /^kmxbr[0-9a-f]{8}$/);
});

test('a domain is named by its node FQDN; volumes by domain name and OS', () => {
  assert.equal(domainName({ fqdn: 'compute-01.k8scluster.kubeinit.local' }), 'compute-01.k8scluster.kubeinit.local');
  assert.deepEqual(volumeNames({ fqdn: 'controller-01.lab.x', osFamily: 'linux' }), [
    'controller-01.lab.x.qcow2',
    'controller-01.lab.x-cidata.iso',
  ]);
  assert.deepEqual(volumeNames({ fqdn: 'win-01.lab.x', osFamily: 'windows' }), [
    'win-01.lab.x.qcow2',
    'win-01.lab.x-unattend.iso',
  ]);
});

test('the owner mark is one namespaced element whose text is the cluster identity', () => {
  assert.equal(
    ownerMetadata('lab.kubeinit.local'),
    '<kubemix:cluster xmlns:kubemix="https://kubemix.dev/xmlns/libvirt/v1">lab.kubeinit.local</kubemix:cluster>',
  );
});

test('the VXLAN link and VNI: per cluster, interface name within 15 characters, VNI in 24 bits and not 0', () => {
  const a = clusterIdentity({ name: 'k8scluster', domain: 'kubeinit.local' });
  const b = clusterIdentity({ name: 'k8scluster', domain: 'example.org' });
  assert.match(vxlanName(a), /^kmxvx[0-9a-f]{8}$/);
  assert.equal(vxlanName(a).slice(5), bridgeName(a).slice(5));
  assert.notEqual(vxlanName(a), vxlanName(b));
  assert.notEqual(vxlanId(a), vxlanId(b));
  for (const id of [a, b]) assert.ok(vxlanId(id) >= 1 && vxlanId(id) < 2 ** 24);
});
