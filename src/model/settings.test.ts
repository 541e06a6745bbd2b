import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { readSpec } from '../spec/read.js';
import { resolveModel, type ClusterModel } from './resolve.js';
import { addressRanges } from './settings.js';

/** A spec written in YAML: a Linux-only libvirt cluster with `edit` applied to spec. */
function modelOf(edit: (spec: Record<string, unknown>) => void): ClusterModel {
  const doc = {
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'c1' },
    spec: {
      domain: 'example.internal',
      infrastructure: {
        driver: 'libvirt',
        hypervisors: [
          { name: 'hv1', address: 'hv1.example.com', user: 'root' },
          { name: 'hv2', address: 'hv2.example.com', user: 'root', libvirtUri: 'qemu+ssh://hv2/system' },
        ],
      },
      nodes: {
        controlPlane: { count: 1, distro: 'debian-13' },
        workers: [{ name: 'compute', count: 1, os: 'debian-13' }],
      },
    } as Record<string, unknown>,
  };
  edit(doc.spec);
  const result = readSpec({ kind: 'file', path: 'spec.yaml', text: stringify(parse(JSON.stringify(doc))) });
  return resolveModel(result);
}

test('address ranges: trimmed, in spec order, and each under its family', () => {
  assert.deepEqual(addressRanges('fd00:10:244::/56, 10.244.0.0/16'), {
    all: ['fd00:10:244::/56', '10.244.0.0/16'],
    ipv4: '10.244.0.0/16',
    ipv6: 'fd00:10:244::/56',
  });
  assert.deepEqual(addressRanges('10.96.0.0/12'), { all: ['10.96.0.0/12'], ipv4: '10.96.0.0/12', ipv6: undefined });
});

test('overlay: vxlan carries VNI and port; host-gw has none', () => {
  const vxlan = modelOf(() => undefined);
  assert.deepEqual(vxlan.overlay, {
    plugin: 'flannel',
    backend: 'vxlan',
    vxlan: { vni: 4096, port: 4789 },
    podMtu: 1400,
  });
  const hostGw = modelOf((s) => {
    s['cni'] = { backend: 'host-gw' };
  });
  assert.equal(hostGw.overlay.vxlan, undefined);
  assert.equal(hostGw.overlay.podMtu, 1450);
});

test('dual-stack pod network: flannel gets the IPv4 range as Network, the IPv6 one beside it', () => {
  const m = modelOf((s) => {
    s['network'] = { podCidr: '10.244.0.0/16,fd00:10:244::/56', serviceCidr: '10.96.0.0/12,fd00:10:96::/112' };
  });
  assert.deepEqual(m.podNetworks, {
    all: ['10.244.0.0/16', 'fd00:10:244::/56'],
    ipv4: '10.244.0.0/16',
    ipv6: 'fd00:10:244::/56',
  });
  assert.deepEqual(m.serviceNetworks.all, ['10.96.0.0/12', 'fd00:10:96::/112']);
});

test('proxy only when http or https is set; mirrors sorted by registry; artifact mirror as given', () => {
  assert.equal(
    modelOf((s) => {
      s['proxy'] = { noProxy: ['.corp'] };
    }).proxy,
    undefined,
  );
  const m = modelOf((s) => {
    s['proxy'] = { https: 'http://proxy.example.com:3128', noProxy: ['.corp'] };
    s['mirrors'] = {
      images: { 'registry.k8s.io': 'mirror.example.com/k8s', 'docker.io': 'mirror.example.com/hub' },
      artifacts: 'https://files.example.com',
    };
  });
  assert.deepEqual(m.proxy, { http: undefined, https: 'http://proxy.example.com:3128', noProxy: ['.corp'] });
  assert.deepEqual(
    m.mirrors.images.map((i) => i.registry),
    ['docker.io', 'registry.k8s.io'],
  );
  assert.equal(m.mirrors.artifacts, 'https://files.example.com');
});

test('services settings exist only with a services node; hypervisors keep their libvirt URI', () => {
  const on = modelOf((s) => {
    s['services'] = { dns: true, loadBalancer: false, dhcp: true, registry: false, forwarders: ['192.0.2.53'] };
  });
  assert.deepEqual(on.services, {
    dns: true,
    loadBalancer: false,
    dhcp: true,
    registry: false,
    forwarders: ['192.0.2.53'],
  });
  assert.ok(on.nodes.some((n) => n.role === 'services'));
  const off = modelOf((s) => {
    s['services'] = { enabled: false };
  });
  assert.equal(off.services, undefined);
  assert.ok(!off.nodes.some((n) => n.role === 'services'));
  assert.deepEqual(on.hypervisors, [
    { name: 'hv1', address: 'hv1.example.com', domainType: 'auto', libvirtUri: 'qemu:///system' },
    { name: 'hv2', address: 'hv2.example.com', domainType: 'auto', libvirtUri: 'qemu+ssh://hv2/system' },
  ]);
});
