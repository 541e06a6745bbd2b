import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { InvalidSpecError, type Diagnostic } from '../errors.js';
import { readSpec } from '../spec/read.js';
import { resolveModel, type ClusterModel } from './resolve.js';
import { controlPlaneSpread, placeOnHypervisors, type PlacementInput } from './placement.js';

interface Opts {
  readonly hypervisors?: number;
  readonly controllers?: number;
  readonly workers?: readonly { name: string; count: number; hypervisor?: string }[];
  readonly nodes?: Record<string, unknown>;
  readonly services?: Record<string, unknown>;
}

function doc(o: Opts): string {
  const hypervisors = Array.from({ length: o.hypervisors ?? 3 }, (_, i) => ({
    name: `hypervisor-0${i + 1}`,
    address: `hv${i + 1}.example.com`,
  }));
  const workers = (o.workers ?? []).map((w) => ({ os: 'debian-13', ...w }));
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'k8scluster' },
    spec: {
      infrastructure: { driver: 'libvirt', hypervisors },
      nodes: { controlPlane: { count: o.controllers ?? 3 }, workers, ...o.nodes },
      services: { ...o.services },
    },
  });
}

const model = (o: Opts): ClusterModel => resolveModel(readSpec({ kind: 'file', path: 'c.yaml', text: doc(o) }));
const placed = (m: ClusterModel) => Object.fromEntries(m.nodes.map((n) => [n.name, n.hypervisor]));
const spread = (m: ClusterModel) => m.warnings.filter((w) => w.code === 'placement.control-plane-not-spread');

function refused(o: Opts): Diagnostic[] {
  try {
    readSpec({ kind: 'file', path: 'c.yaml', text: doc(o) });
  } catch (e) {
    if (e instanceof InvalidSpecError) return e.diagnostics.filter((d) => d.severity === 'error');
    throw e;
  }
  return assert.fail('the spec was accepted');
}

test('three controllers on three hypervisors: one each, so losing any one keeps etcd quorum', () => {
  const m = model({ workers: [{ name: 'compute', count: 4 }] });
  assert.deepEqual(placed(m), {
    'controller-01': 'hypervisor-01',
    'controller-02': 'hypervisor-02',
    'controller-03': 'hypervisor-03',
    'compute-01': 'hypervisor-02',
    'compute-02': 'hypervisor-03',
    'compute-03': 'hypervisor-01',
    'compute-04': 'hypervisor-02',
    'service-01': 'hypervisor-03',
  });
  assert.deepEqual(spread(m), []);
});

test('too few hypervisors: the warning names the hypervisor whose loss breaks quorum and how many are needed', () => {
  const m = model({ hypervisors: 2 });
  assert.equal(placed(m)['controller-02'], 'hypervisor-02');
  const [w, ...rest] = spread(m);
  assert.deepEqual(rest, []);
  assert.equal(w?.path, 'spec.infrastructure.hypervisors');
  assert.match(w?.message ?? '', /3 control-plane nodes cannot be spread over 2 hypervisors/);
  assert.match(w?.message ?? '', /losing hypervisor-01 \(controller-01, controller-03\) leaves 1 of 3 etcd members/);
  assert.match(w?.message ?? '', /needs 3$/);
  assert.equal(spread(model({ hypervisors: 1, controllers: 1 })).length, 0, 'one controller: nothing to spread');
});

test('for every count: the warning appears exactly when some hypervisor loss leaves etcd below quorum', () => {
  for (let n = 1; n <= 9; n += 1) {
    for (let h = 1; h <= 7; h += 1) {
      const hvs = Array.from({ length: h }, (_, i) => `hv${i}`);
      const nodes: PlacementInput[] = Array.from({ length: n }, (_, i) => ({ name: `c${i}`, role: 'control-plane' }));
      const at = placeOnHypervisors(nodes, hvs);
      const counts = hvs.map((hv) => nodes.filter((c) => at.get(c.name) === hv).length);
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `n=${n} h=${h}: ${counts.join(',')} is not even`);
      const quorum = Math.floor(n / 2) + 1;
      const breaks = counts.some((k) => n - k < quorum);
      const warned = controlPlaneSpread(nodes, at, hvs).length > 0;
      assert.equal(warned, n >= 3 && breaks, `n=${n} h=${h}`);
      // Spreading is as good as it gets: with h ≥ n every controller has its own hypervisor.
      if (h >= n) assert.ok(counts.every((k) => k <= 1));
    }
  }
});

test('pins: a node pin wins over its group pin, pinned controllers count when the rest spread', () => {
  const m = model({
    workers: [
      { name: 'compute', count: 3, hypervisor: 'hypervisor-03' },
      { name: 'win', count: 2 },
    ],
    nodes: { placement: { 'controller-01': 'hypervisor-03', 'compute-02': 'hypervisor-01' } },
    services: { hypervisor: 'hypervisor-01' },
  });
  assert.deepEqual(placed(m), {
    'controller-01': 'hypervisor-03',
    'controller-02': 'hypervisor-01',
    'controller-03': 'hypervisor-02',
    'compute-01': 'hypervisor-03',
    'compute-02': 'hypervisor-01',
    'compute-03': 'hypervisor-03',
    'win-01': 'hypervisor-03',
    'win-02': 'hypervisor-01',
    'service-01': 'hypervisor-01',
  });
  assert.deepEqual(spread(m), []);
});

test('pins that stack the control plane on one hypervisor: the warning names the pin', () => {
  const group = spread(model({ nodes: { controlPlane: { count: 3, hypervisor: 'hypervisor-02' } } }));
  assert.equal(group.length, 1);
  assert.equal(group[0]?.path, 'spec.nodes.controlPlane.hypervisor');
  assert.match(group[0]?.message ?? '', /the pins put 3 control-plane nodes on hypervisor-02/);
  const one = spread(model({ nodes: { placement: { 'controller-01': 'hypervisor-02' } } }));
  assert.deepEqual(one, [], 'one pin: the others spread around it');
  const two = spread(
    model({ nodes: { placement: { 'controller-01': 'hypervisor-02', 'controller-03': 'hypervisor-02' } } }),
  );
  assert.equal(two[0]?.path, 'spec.nodes.placement.controller-01');
});

test('growing the cluster never moves a node that exists (cleanup would remove its VM)', () => {
  const two = (compute: number, win: number) => [
    { name: 'compute', count: compute },
    { name: 'win', count: win },
  ];
  const small = placed(model({ controllers: 1, workers: two(2, 1) }));
  for (const bigger of [
    { controllers: 3, workers: two(2, 1) },
    { controllers: 1, workers: two(5, 1) },
    { controllers: 5, workers: [...two(3, 2), { name: 'extra', count: 2 }] },
  ]) {
    const big = placed(model(bigger));
    for (const [name, hv] of Object.entries(small)) assert.equal(big[name], hv, `${name} moved`);
  }
});

test('placement is deterministic: the same spec places the same way', () => {
  const o: Opts = { hypervisors: 4, controllers: 5, workers: [{ name: 'compute', count: 7 }] };
  assert.deepEqual(placed(model(o)), placed(model(o)));
});

test('a pin to an unknown hypervisor is refused with its spec path and a suggestion', () => {
  const errors = refused({
    workers: [{ name: 'compute', count: 1, hypervisor: 'hypervisor-04' }],
    nodes: { placement: { 'controller-02': 'hypervsor-02' } },
    services: { hypervisor: 'nowhere' },
  });
  const at = Object.fromEntries(errors.map((e) => [e.path, e]));
  assert.equal(at['spec.nodes.workers[0].hypervisor']?.code, 'placement.unknown-hypervisor');
  assert.match(at['spec.nodes.placement.controller-02']?.message ?? '', /did you mean "hypervisor-02"/);
  assert.equal(at['spec.services.hypervisor']?.hint, 'pin to one of: hypervisor-01, hypervisor-02, hypervisor-03');
  assert.equal(errors.length, 3);
});

test('a placement entry for a node the spec does not make is refused', () => {
  const [e, ...rest] = refused({ nodes: { placement: { 'controller-04': 'hypervisor-01' } } });
  assert.deepEqual(rest, []);
  assert.equal(e?.code, 'placement.unknown-node');
  assert.equal(e?.path, 'spec.nodes.placement.controller-04');
  assert.match(e?.message ?? '', /no node "controller-04" \(did you mean "controller-01"\?\)/);
});

test('with existing hosts there is no hypervisor to pin to', () => {
  const text = stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'k8scluster' },
    spec: {
      infrastructure: {
        driver: 'existing',
        hosts: [{ name: 'cp1', address: '10.0.0.10', roles: ['control-plane'], os: 'debian-13' }],
      },
      services: { enabled: false, hypervisor: 'hypervisor-01' },
    },
  });
  assert.throws(
    () => readSpec({ kind: 'file', path: 'c.yaml', text }),
    (e: unknown) =>
      e instanceof InvalidSpecError &&
      e.diagnostics.some(
        (d) =>
          d.code === 'placement.unknown-hypervisor' &&
          d.path === 'spec.services.hypervisor' &&
          /this spec has none/.test(d.message),
      ),
  );
});
