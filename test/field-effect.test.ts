// No field is silently ignored: flipping any leaf of a spec that sets every
// field must change plan.json (or an artifact), or the field must be
// reported as "accepted, not used yet". A new schema field without an entry
// in ALTERNATIVES fails this test until someone decides what it does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { stringify } from 'yaml';

type Doc = Record<string, unknown>;

const LIBVIRT: Doc = {
  apiVersion: 'kubemix.dev/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'full' },
  spec: {
    domain: 'kubeinit.local',
    kubernetes: {
      version: '1.36',
      install: 'binaries',
      timeouts: {
        controlPlaneComponentHealthCheck: '10m',
        kubeletHealthCheck: '10m',
        kubernetesAPICall: '2m',
        etcdAPICall: '4m',
        tlsBootstrap: '10m',
        discovery: '10m',
        upgradeManifests: '10m',
      },
      controlPlaneProbes: { timeoutSeconds: 60, livenessFailureThreshold: 24 },
    },
    containerRuntime: { containerd: '2.3' },
    network: {
      nodeCidr: '10.0.0.0/24',
      gateway: '10.0.0.254',
      mtu: 1450,
      podCidr: '10.244.0.0/16',
      serviceCidr: '10.96.0.0/12',
    },
    cni: { plugin: 'flannel', backend: 'vxlan', vni: 4096, port: 4789, mtu: 1300 },
    infrastructure: {
      driver: 'libvirt',
      hypervisors: [
        {
          name: 'hypervisor-01',
          address: 'hv1.example.com',
          user: 'root',
          port: 22,
          identityFile: '~/.ssh/id_ed25519',
          bastion: { address: 'jump.example.com', port: 22, user: 'jump', identityFile: '~/.ssh/jump' },
          libvirtUri: 'qemu:///system',
        },
        { name: 'hypervisor-02', address: 'hv2.example.com' },
      ],
    },
    nodes: {
      controlPlane: { count: 1, distro: 'debian-13', vcpus: 4, ram: '8Gi', disk: '40Gi', hypervisor: 'hypervisor-02' },
      workers: [
        {
          name: 'compute',
          count: 1,
          os: 'windows-2022',
          vcpus: 4,
          ram: '8Gi',
          disk: '80Gi',
          hypervisor: 'hypervisor-02',
        },
        { name: 'linux', count: 1, os: 'debian-13' },
      ],
      placement: { 'linux-01': 'hypervisor-02' },
    },
    services: {
      enabled: true,
      distro: 'debian-13',
      forwarders: ['192.0.2.53'],
      dns: true,
      loadBalancer: true,
      dhcp: true,
      registry: true,
      hypervisor: 'hypervisor-02',
      vcpus: 2,
      ram: '4Gi',
      disk: '40Gi',
    },
    proxy: { http: 'http://proxy.example.com:3128', https: 'http://proxy.example.com:3128', noProxy: ['.example.com'] },
    mirrors: { images: { 'registry.k8s.io': 'mirror.example.com/k8s' }, artifacts: 'https://mirror.example.com/files' },
    airGapped: false,
    windows: {
      hostProcess: {
        flannelImage: 'registry.example.com/flannel:v0.28.4-hostprocess',
        kubeProxyImage: 'registry.example.com/kube-proxy:v1.36.2-hostprocess',
      },
    },
  },
};

const EXISTING: Doc = {
  apiVersion: 'kubemix.dev/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'full' },
  spec: {
    infrastructure: {
      driver: 'existing',
      hosts: [
        {
          name: 'cp1',
          address: 'cp1.example.com',
          ip: '10.0.0.10',
          roles: ['control-plane'],
          os: 'debian-13',
          user: 'admin',
          port: 22,
          identityFile: '~/.ssh/a',
          bastion: { address: 'jump', port: 22, user: 'j', identityFile: '~/.ssh/j' },
        },
        { name: 'w1', address: '10.0.0.20', roles: ['worker'], os: 'windows-2022' },
      ],
    },
  },
};

/** Another valid value for each leaf (path with indices), and optional context applied to both sides. */
const ALTERNATIVES: Record<string, { to: unknown; context?: Record<string, unknown> }> = {
  'metadata.name': { to: 'other' },
  'spec.domain': { to: 'example.org' },
  'spec.kubernetes.version': { to: '1.35' },
  'spec.kubernetes.install': { to: 'packages' },
  'spec.airGapped': { to: true },
  'spec.kubernetes.timeouts.controlPlaneComponentHealthCheck': { to: '15m' },
  'spec.kubernetes.timeouts.kubeletHealthCheck': { to: '15m' },
  'spec.kubernetes.timeouts.kubernetesAPICall': { to: '3m' },
  'spec.kubernetes.timeouts.etcdAPICall': { to: '5m' },
  'spec.kubernetes.timeouts.tlsBootstrap': { to: '15m' },
  'spec.kubernetes.timeouts.discovery': { to: '15m' },
  'spec.kubernetes.timeouts.upgradeManifests': { to: '15m' },
  'spec.kubernetes.controlPlaneProbes.timeoutSeconds': { to: 90 },
  'spec.kubernetes.controlPlaneProbes.livenessFailureThreshold': { to: 30 },
  'spec.containerRuntime.containerd': { to: '2.2' },
  'spec.network.nodeCidr': { to: '10.0.0.0/23' },
  'spec.network.gateway': { to: '10.0.0.1' },
  'spec.network.mtu': { to: 1400 },
  'spec.network.podCidr': { to: '10.245.0.0/16' },
  'spec.network.serviceCidr': { to: '10.97.0.0/16' },
  // Calico is planned for Linux nodes only (cni.calico-windows): compare on a Linux worker.
  'spec.cni.plugin': { to: 'calico', context: { 'spec.nodes.workers[0].os': 'debian-13' } },
  'spec.cni.backend': { to: 'host-gw' },
  'spec.cni.vni': { to: 5000, context: { 'spec.cni.plugin': 'calico', 'spec.nodes.workers[0].os': 'debian-13' } },
  'spec.cni.port': { to: 8472, context: { 'spec.cni.backend': 'host-gw' } },
  'spec.cni.mtu': { to: 1200 },
  'spec.infrastructure.hypervisors[0].name': { to: 'hv-a' },
  'spec.infrastructure.hypervisors[0].address': { to: 'hv9.example.com' },
  'spec.infrastructure.hypervisors[0].user': { to: 'admin' },
  'spec.infrastructure.hypervisors[0].port': { to: 2222 },
  'spec.infrastructure.hypervisors[0].identityFile': { to: '~/.ssh/other' },
  'spec.infrastructure.hypervisors[0].bastion.address': { to: 'jump2.example.com' },
  'spec.infrastructure.hypervisors[0].bastion.port': { to: 2200 },
  'spec.infrastructure.hypervisors[0].bastion.user': { to: 'other' },
  'spec.infrastructure.hypervisors[0].bastion.identityFile': { to: '~/.ssh/other' },
  'spec.infrastructure.hypervisors[0].libvirtUri': { to: 'qemu+ssh://root@hv1.example.com/system' },
  // Renaming the second hypervisor: the pins follow to the first on both sides.
  'spec.infrastructure.hypervisors[1].name': {
    to: 'hv-b',
    context: {
      'spec.nodes.controlPlane.hypervisor': 'hypervisor-01',
      'spec.nodes.workers[0].hypervisor': 'hypervisor-01',
      'spec.services.hypervisor': 'hypervisor-01',
      'spec.nodes.placement.linux-01': 'hypervisor-01',
    },
  },
  'spec.infrastructure.hypervisors[1].address': { to: 'hv8.example.com' },
  'spec.nodes.controlPlane.hypervisor': { to: 'hypervisor-01' },
  'spec.nodes.workers[0].hypervisor': { to: 'hypervisor-01' },
  'spec.nodes.placement.linux-01': { to: 'hypervisor-01' },
  'spec.services.hypervisor': { to: 'hypervisor-01' },
  'spec.nodes.controlPlane.count': { to: 3 },
  'spec.nodes.controlPlane.distro': { to: 'ubuntu-24.04' },
  'spec.nodes.controlPlane.vcpus': { to: 8 },
  'spec.nodes.controlPlane.ram': { to: '16Gi' },
  'spec.nodes.controlPlane.disk': { to: '60Gi' },
  'spec.nodes.workers[0].name': { to: 'win' },
  'spec.nodes.workers[0].count': { to: 2 },
  'spec.nodes.workers[0].os': { to: 'windows-2025' },
  'spec.nodes.workers[0].vcpus': { to: 8 },
  'spec.nodes.workers[0].ram': { to: '16Gi' },
  'spec.nodes.workers[0].disk': { to: '120Gi' },
  // The placement entry names linux-01: renamed, it would name no node.
  'spec.nodes.workers[1].name': { to: 'lin', context: { 'spec.nodes.placement': {} } },
  'spec.nodes.workers[1].count': { to: 2 },
  'spec.nodes.workers[1].os': { to: 'ubuntu-24.04' },
  'spec.services.enabled': { to: false },
  'spec.services.distro': { to: 'debian-12' },
  'spec.services.forwarders[0]': { to: '192.0.2.54' },
  'spec.services.dns': { to: false },
  'spec.services.loadBalancer': { to: false },
  'spec.services.dhcp': { to: false },
  'spec.services.registry': { to: false },
  'spec.services.vcpus': { to: 4 },
  'spec.services.ram': { to: '8Gi' },
  'spec.services.disk': { to: '80Gi' },
  'spec.proxy.http': { to: 'http://other.example.com:3128' },
  'spec.proxy.https': { to: 'http://other.example.com:3128' },
  'spec.proxy.noProxy[0]': { to: '.example.org' },
  'spec.mirrors.images.registry.k8s.io': { to: 'mirror.example.org/k8s' },
  'spec.mirrors.artifacts': { to: 'https://mirror.example.org/files' },
  'spec.windows.hostProcess.flannelImage': { to: 'registry.example.com/flannel:v0.28.5-hostprocess' },
  'spec.windows.hostProcess.kubeProxyImage': { to: 'registry.example.com/kube-proxy:v1.36.3-hostprocess' },
  'spec.infrastructure.hosts[0].name': { to: 'cp9' },
  'spec.infrastructure.hosts[0].address': { to: 'cp9.example.com' },
  'spec.infrastructure.hosts[0].ip': { to: '10.0.0.11' },
  'spec.infrastructure.hosts[0].roles[0]': {
    to: 'control-plane',
    context: { 'spec.infrastructure.hosts[0].roles': ['worker', 'control-plane'] },
  },
  'spec.infrastructure.hosts[0].os': { to: 'ubuntu-24.04' },
  'spec.infrastructure.hosts[0].user': { to: 'root' },
  'spec.infrastructure.hosts[0].port': { to: 2222 },
  'spec.infrastructure.hosts[0].identityFile': { to: '~/.ssh/b' },
  'spec.infrastructure.hosts[0].bastion.address': { to: 'jump2' },
  'spec.infrastructure.hosts[0].bastion.port': { to: 2200 },
  'spec.infrastructure.hosts[0].bastion.user': { to: 'k' },
  'spec.infrastructure.hosts[0].bastion.identityFile': { to: '~/.ssh/k' },
  'spec.infrastructure.hosts[1].name': { to: 'w9' },
  'spec.infrastructure.hosts[1].address': { to: '10.0.0.21' },
  'spec.infrastructure.hosts[1].roles[0]': {
    to: 'control-plane',
    context: { 'spec.infrastructure.hosts[1].os': 'debian-13' },
  },
  'spec.infrastructure.hosts[1].os': { to: 'windows-2025' },
};

const SKIP = new Set(['apiVersion', 'kind', 'spec.infrastructure.driver']);

function leaves(value: unknown, path: string, out: string[]): string[] {
  if (Array.isArray(value)) value.forEach((v, i) => leaves(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value))
      leaves(v, path === '' ? k : path.startsWith('spec.mirrors.images') ? `${path}.${k}` : `${path}.${k}`, out);
  } else out.push(path);
  return out;
}

function setPath(doc: Doc, path: string, value: unknown): Doc {
  const copy = structuredClone(doc);
  const parts = path.startsWith('spec.mirrors.images.')
    ? ['spec', 'mirrors', 'images', path.slice('spec.mirrors.images.'.length)]
    : path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '');
  let cur = copy as Record<string, unknown>;
  parts.slice(0, -1).forEach((p) => (cur = cur[p] as Record<string, unknown>));
  cur[parts[parts.length - 1] ?? ''] = value;
  return copy;
}

function plan(doc: Doc): { json: string; warnings: readonly { code: string; path: string }[] } {
  let result;
  try {
    result = readSpec({ kind: 'file', path: 'full.yaml', text: stringify(doc) });
  } catch (error) {
    throw new Error(`${stringify(doc)}\n${JSON.stringify((error as { diagnostics?: unknown }).diagnostics)}`);
  }
  const assembled = assemblePlan(resolveModel(result));
  const { hash: _hash, ...body } = assembled.plan;
  return { json: JSON.stringify({ body, files: assembled.files }), warnings: assembled.plan.warnings };
}

for (const [name, base] of [
  ['libvirt', LIBVIRT],
  ['existing', EXISTING],
] as const) {
  test(`every leaf field of a full ${name} spec has an effect`, () => {
    const paths = leaves(base, '', []).filter((p) => !SKIP.has(p));
    const missing = paths.filter((p) => ALTERNATIVES[p] === undefined);
    assert.deepEqual(missing, [], 'add an alternative value for each new field');
    for (const path of paths) {
      const alt = ALTERNATIVES[path] ?? assert.fail();
      let before = base;
      for (const [p, v] of Object.entries(alt.context ?? {})) before = setPath(before, p, v);
      const after = setPath(before, path, alt.to);
      const a = plan(before);
      const b = plan(after);
      const notUsed = [...a.warnings, ...b.warnings].some(
        (w) => w.code === 'spec.not-used-yet' && path.startsWith(w.path),
      );
      assert.ok(
        a.json !== b.json || notUsed,
        `changing ${path} to ${JSON.stringify(alt.to)} changed nothing and is not reported as not used yet`,
      );
    }
  });
}
