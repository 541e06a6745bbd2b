// A guard against plans that grow faster than the cluster: a per-node file or
// script that lists every node makes the plan quadratic (it once did: an
// /etc/hosts block on each node naming all the others). Sizes, not timings:
// task count, plan.json bytes and artifact bytes for 200 nodes stay within
// 2.2× of 100 nodes (linear is 2×; the fixed part of the plan only lowers it),
// and what each node adds from 100 to 200 and from 200 to 400 nodes is at
// most 3 % more than what each added from 50 to 100 (equal when linear; a
// per-node list of all nodes makes the later nodes cost more — the fixed part
// cannot hide that).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';

/** A libvirt cluster of `nodes` nodes: 3 controllers, the services node, half the workers Windows. */
export function scaleSpecText(nodes: number): string {
  const windows = Math.floor((nodes - 4) / 2);
  const hypervisors = Array.from({ length: 10 }, (_, i) => ({
    name: `hv-${i + 1}`,
    address: `hv${i + 1}.example.com`,
  }));
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: `scale-${nodes}` },
    spec: {
      network: { nodeCidr: '10.0.0.0/20', podCidr: '10.128.0.0/14', serviceCidr: '10.96.0.0/12' },
      infrastructure: { driver: 'libvirt', hypervisors },
      nodes: {
        controlPlane: { count: 3 },
        workers: [
          { name: 'lin', count: nodes - 4 - windows, os: 'debian-13' },
          { name: 'win', count: windows, os: 'windows-2022' },
        ],
      },
    },
  });
}

function sizes(nodes: number): { tasks: number; planBytes: number; artifactBytes: number } {
  const { plan, files } = assemblePlan(
    resolveModel(readSpec({ kind: 'file', path: 'scale.yaml', text: scaleSpecText(nodes) })),
  );
  return {
    tasks: plan.tasks.length,
    planBytes: JSON.stringify(plan).length,
    artifactBytes: files.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0),
  };
}

describe('plan size is linear in the number of nodes', () => {
  const [n50, n100, n200, n400] = [sizes(50), sizes(100), sizes(200), sizes(400)];
  for (const key of ['tasks', 'planBytes', 'artifactBytes'] as const) {
    it(`${key}: 200 nodes within 2.2× of 100 nodes`, () => {
      const ratio = n200[key] / n100[key];
      assert.ok(
        ratio <= 2.2,
        `${key} grew ${ratio.toFixed(2)}× from 100 to 200 nodes (${n100[key]} → ${n200[key]}): something per node lists every node`,
      );
    });
    // Linear, a node costs the same wherever it is added: measured, the three spans agree within 0.2 %
    // (names and addresses grow by a digit here and there). A list of every node on each node adds a
    // term that grows with the span: one short line per other node on the Linux nodes alone made the
    // 100→200 span 6 % and the 200→400 span 19 % dearer than 50→100 (tried).
    it(`${key}: a node added past 100 or past 200 costs within 3 % of one added past 50`, () => {
      const early = (n100[key] - n50[key]) / 50;
      for (const [from, to, a, b] of [
        [100, 200, n100, n200],
        [200, 400, n200, n400],
      ] as const) {
        const late = (b[key] - a[key]) / (to - from);
        assert.ok(
          late <= early * 1.03,
          `${key} per added node: ${early.toFixed(0)} from 50 to 100 nodes, ${late.toFixed(0)} from ${from} to ${to}: the plan grows faster than the cluster`,
        );
      }
    });
  }
});
