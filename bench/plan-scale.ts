// Plans 10-, 100- and 1000-node specs in one run and prints the time ratio
// 1000/100 (goal ≤ 12: near linear) and peak memory. Not a pass/fail test.
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';

function specText(nodes: number): string {
  const windows = Math.floor((nodes - 4) / 2);
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1', kind: 'Cluster', metadata: { name: `scale-${nodes}` },
    spec: {
      network: { nodeCidr: '10.0.0.0/20', podCidr: '10.128.0.0/14', serviceCidr: '10.96.0.0/12' },
      infrastructure: { driver: 'libvirt', hypervisors: Array.from({ length: 10 }, (_, i) => ({ name: `hv-${i + 1}`, address: `hv${i + 1}.example.com` })) },
      nodes: {
        controlPlane: { count: 3 },
        workers: [{ name: 'lin', count: nodes - 4 - windows, os: 'debian-13' }, { name: 'win', count: windows, os: 'windows-2022' }],
      },
    },
  });
}

function planOnce(text: string): number {
  const plan = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'bench.yaml', text }))).plan;
  return JSON.stringify(plan).length;
}

function timeMs(text: string, runs: number): number {
  planOnce(text);
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    planOnce(text);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0;
}

const results = new Map<number, number>();
for (const [nodes, runs] of [[10, 50], [100, 20], [1000, 5]] as const) {
  const ms = timeMs(specText(nodes), runs);
  results.set(nodes, ms);
  console.log(`${String(nodes).padStart(5)} nodes: ${ms.toFixed(1).padStart(8)} ms per plan (median of ${runs})`);
}
const ratio = (results.get(1000) ?? 0) / (results.get(100) ?? 1);
console.log(`time ratio 1000/100: ${ratio.toFixed(1)} (goal ≤ 12)`);
console.log(`peak memory (max RSS): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
