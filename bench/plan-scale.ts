// Plans 10-, 100-, 1000- and 5000-node specs in one run and prints the time
// per plan, the plan and artifact bytes per node, the time ratio 1000/100
// (goal ≤ 11: near linear) and peak memory (goal < 300 MiB). Goals on a
// 2-core machine: 1000 nodes < 1 s, 5000 nodes < 6 s. Not a pass/fail test.
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { writeJsonPretty } from '../src/util/json.js';

/** Worker groups of at most 999 nodes (the schema's limit per group). */
function groups(prefix: string, count: number, os: string): { name: string; count: number; os: string }[] {
  const out: { name: string; count: number; os: string }[] = [];
  for (let left = count, i = 0; left > 0; left -= 999, i += 1)
    out.push({ name: i === 0 ? prefix : `${prefix}${i}`, count: Math.min(999, left), os });
  return out;
}

function specText(nodes: number): string {
  const windows = Math.floor((nodes - 4) / 2);
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: `scale-${nodes}` },
    spec: {
      network: { nodeCidr: '172.16.0.0/18', podCidr: '10.0.0.0/8', serviceCidr: '172.20.0.0/16' },
      infrastructure: {
        driver: 'libvirt',
        hypervisors: Array.from({ length: 10 }, (_, i) => ({ name: `hv-${i + 1}`, address: `hv${i + 1}.example.com` })),
      },
      nodes: {
        controlPlane: { count: 3 },
        workers: [...groups('lin', nodes - 4 - windows, 'debian-13'), ...groups('win', windows, 'windows-2022')],
      },
    },
  });
}

interface PlanSize {
  readonly planBytes: number;
  readonly artifactBytes: number;
}

/** plan.json's bytes as `kubemix plan --out` writes them: streamed in pieces, never one string. */
function planJsonBytes(plan: unknown): number {
  let bytes = 1;
  writeJsonPretty(plan, 2, (s) => void (bytes += Buffer.byteLength(s)));
  return bytes;
}

function planOnce(text: string): PlanSize {
  const { plan, files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'bench.yaml', text })));
  return {
    planBytes: planJsonBytes(plan),
    artifactBytes: files.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0),
  };
}

function timeMs(text: string, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    planOnce(text);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0;
}

const results = new Map<number, number>();
for (const [nodes, runs] of [
  [10, 50],
  [100, 20],
  [1000, 5],
  [5000, 3],
] as const) {
  const text = specText(nodes);
  const size = planOnce(text);
  const ms = timeMs(text, runs);
  results.set(nodes, ms);
  const perNode = `plan.json ${(size.planBytes / nodes / 1024).toFixed(1)} KiB + artifacts ${(size.artifactBytes / nodes / 1024).toFixed(1)} KiB per node`;
  console.log(
    `${String(nodes).padStart(5)} nodes: ${ms.toFixed(1).padStart(8)} ms per plan (median of ${runs}); ${perNode}`,
  );
}
const ratio = (results.get(1000) ?? 0) / (results.get(100) ?? 1);
console.log(
  `time ratio 1000/100: ${ratio.toFixed(1)} (goal ≤ 11); 5000/1000: ${((results.get(5000) ?? 0) / (results.get(1000) ?? 1)).toFixed(1)} (linear is 5)`,
);
console.log(`peak memory (max RSS): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
