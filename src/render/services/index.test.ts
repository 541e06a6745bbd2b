import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveModel, type ClusterModel } from '../../model/resolve.js';
import { readSpec } from '../../spec/read.js';
import { ptrLabel, reverseZoneOf, servicesFacts } from './facts.js';
import { renderServices } from './index.js';

/** A spec in YAML so derived facts (the API endpoint) follow the toggles. */
function fromYaml(services: string, workers: number): ClusterModel {
  const text = `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata: { name: k8scluster }
spec:
  domain: kubeinit.local
  infrastructure: { driver: libvirt, hypervisors: [{ name: hypervisor-01, address: hv1.example.com }] }
  nodes: { controlPlane: { count: 1 }, workers: [{ name: compute, count: ${workers}, os: debian-13 }] }
  services: ${services}
`;
  return resolveModel(readSpec({ kind: 'file', path: 'spec.yaml', text }));
}

function model(toggles: Record<string, boolean>, shape = 'k8s-libvirt-1-1-1'): ClusterModel {
  const base = resolveModel(readSpec({ kind: 'kubeinit', spec: shape, hypervisors: 'hv1.example.com' }));
  const services = base.services ?? assert.fail('the shape has a services node');
  return { ...base, services: toggles['enabled'] === false ? undefined : { ...services, ...toggles } };
}

describe('renderServices', () => {
  it('renders only what the spec switches on', () => {
    const paths = (m: ClusterModel): string[] =>
      renderServices(m)
        .map((a) => a.remotePath)
        .sort();
    // The download cache's nginx config and unit come with every services node.
    const cache = ['/etc/kubemix/files/nginx.conf', '/etc/systemd/system/kubemix-files.service'];
    // A libvirt shape: the driver's network answers DHCP, never dnsmasq on the services node.
    assert.ok(!paths(model({})).includes('/etc/dnsmasq.d/kubemix.conf'));
    assert.equal(paths(model({})).length, 7);
    assert.deepEqual(
      paths(model({ dns: false, dhcp: false, registry: false })),
      [...cache, '/etc/haproxy/haproxy.cfg'].sort(),
    );
    assert.deepEqual(paths(model({ loadBalancer: false, dns: false, registry: false })), [...cache].sort());
    assert.deepEqual(renderServices(model({ enabled: false })), []);
  });

  it('sends ingress to the controllers when there is no Linux worker', () => {
    const facts = servicesFacts(model({}, 'k8s-libvirt-3-0-1'));
    assert.deepEqual(
      facts?.ingress.map((n) => n.name),
      ['controller-01', 'controller-02', 'controller-03'],
    );
  });

  it('points api and *.apps at the first nodes when there is no load balancer', () => {
    const zone = renderServices(fromYaml('{ loadBalancer: false }', 2)).find((a) =>
      a.remotePath.endsWith('db.k8scluster.kubeinit.local'),
    );
    assert.match(zone?.content ?? '', /^api +IN A +10\.0\.0\.1$/m);
    assert.match(zone?.content ?? '', /^\*\.apps +IN A +10\.0\.0\.2$/m);
  });
});

describe('Bind forwarders', () => {
  it('default to the gateway and follow spec.services.forwarders', () => {
    const conf = (m: ClusterModel): string =>
      renderServices(m).find((a) => a.remotePath === '/etc/bind/named.conf')?.content ?? '';
    assert.match(conf(fromYaml('{}', 1)), /forwarders \{ 10\.0\.0\.254; \};/);
    assert.match(
      conf(fromYaml('{ forwarders: [192.0.2.53, 198.51.100.53] }', 1)),
      /forwarders \{ 192\.0\.2\.53; 198\.51\.100\.53; \};/,
    );
  });
});

describe('reverse zones', () => {
  it('round the node network out to whole octets', () => {
    assert.deepEqual(reverseZoneOf('10.0.0.0/24'), { name: '0.0.10.in-addr.arpa', octets: 3 });
    assert.deepEqual(reverseZoneOf('172.16.0.0/22'), { name: '16.172.in-addr.arpa', octets: 2 });
    assert.equal(ptrLabel('172.16.3.7', 2), '7.3');
  });
});
