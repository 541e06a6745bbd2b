// Plans 10-, 100-, 1000- and 5000-node specs and prints, per size, the wall
// and CPU time per plan, the plan.json and artifact bytes per node and the
// peak memory, then the time ratios 1000/100 (goal ≤ 11: near linear) and
// 5000/1000. Goals on this 2-core machine: 1000 nodes < 1 s, 5000 nodes < 6 s,
// peak RSS < 300 MiB. Not a pass/fail test.
//
// Each size runs in child processes of its own: one makes one plan, as
// `kubemix plan --out` does, and reports its peak RSS; another makes a warm-up
// plan and then the timed ones. So the peak RSS printed is one plan's of that
// size, not the largest size's nor that of several plans' garbage together.
// BENCH_BASELINE_DIST=<another build's dist/> plans the same specs with that
// build too, size by size in turns, so the two are measured under the same load.
// BENCH_SIZES=10,100 plans only the sizes named; BENCH_ROUNDS and BENCH_NODE_FLAGS: see main() and runChild().
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';

type Assemble = typeof import('../src/plan/assemble.js');
type Resolve = typeof import('../src/model/resolve.js');
type Read = typeof import('../src/spec/read.js');
type Json = typeof import('../src/util/json.js');
type Hash = typeof import('../src/plan/hash.js');

const SIZES = [
  [10, 50],
  [100, 20],
  [1000, 5],
  [5000, 3],
] as const;

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

/** What one child reports for one size (the times of each timed plan; median: a size's result). */
interface SizeResult {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly walls: readonly number[];
  readonly cpus: readonly number[];
  readonly planBytes: number;
  readonly artifactBytes: number;
  readonly maxRssMiB: number;
}

const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * In the child: plan `nodes` nodes with the build in `dist` once (to warm up
 * and measure sizes), then `runs` times (none: the child only measures memory).
 */
async function child(dist: string, nodes: number, runs: number): Promise<SizeResult> {
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dist, path)).href)) as T;
  const assemble = await load<Partial<Assemble> & Pick<Assemble, 'assemblePlan'>>('src/plan/assemble.js');
  const { resolveModel } = await load<Resolve>('src/model/resolve.js');
  const { readSpec } = await load<Read>('src/spec/read.js');
  const { writeJsonPretty } = await load<Partial<Json>>('src/util/json.js');
  const hashing = await load<Partial<Hash>>('src/plan/hash.js');
  const text = specText(nodes);
  // One plan as `kubemix plan --out` makes it: artifacts counted as they are made, plan.json written (here:
  // counted) in pieces, never one string, and hashed as it is written. Older builds: as they wrote it.
  const planOnce = (): { planBytes: number; artifactBytes: number } => {
    const model = resolveModel(readSpec({ kind: 'file', path: 'bench.yaml', text }));
    let artifactBytes = 0;
    const count = (f: { content: string }): void => void (artifactBytes += Buffer.byteLength(f.content));
    let planBytes = 0;
    const { assemblePlan, assemblePlanTo, assemblePlanBodyTo } = assemble;
    const { streamPlanJson } = hashing;
    if (assemblePlanBodyTo !== undefined && streamPlanJson !== undefined) {
      streamPlanJson(assemblePlanBodyTo(model, count), (bytes) => void (planBytes += bytes.length));
      return { planBytes, artifactBytes };
    }
    const plan =
      assemblePlanTo === undefined
        ? ((assembled) => (assembled.files.forEach(count), assembled.plan))(assemblePlan(model))
        : assemblePlanTo(model, count);
    // Builds before the piecewise writer wrote plan.json as one string.
    if (writeJsonPretty === undefined) planBytes = Buffer.byteLength(JSON.stringify(plan, null, 2));
    else writeJsonPretty(plan, 2, (s) => void (planBytes += Buffer.byteLength(s)));
    return { planBytes: planBytes + 1, artifactBytes };
  };
  const size = planOnce();
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const [start, cpu] = [performance.now(), process.cpuUsage()];
    planOnce();
    const used = process.cpuUsage(cpu);
    walls.push(performance.now() - start);
    cpus.push((used.user + used.system) / 1000);
  }
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  return { ...size, walls, cpus, wallMs: median([...walls]), cpuMs: median([...cpus]), maxRssMiB };
}

/** BENCH_NODE_FLAGS (e.g. `--single-threaded-gc`: GC helper threads waiting on a loaded machine count as CPU). */
const NODE_FLAGS = process.env['BENCH_NODE_FLAGS']?.split(' ').filter((f) => f !== '') ?? [];

function runChild(dist: string, nodes: number, runs: number): SizeResult {
  const out = execFileSync(
    process.execPath,
    [...NODE_FLAGS, fileURLToPath(import.meta.url), '--child', dist, String(nodes), String(runs)],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out) as SizeResult;
}

function line(label: string, nodes: number, runs: number, r: SizeResult, rssMiB: number, load: number): string {
  const kib = (bytes: number): string => (bytes / nodes / 1024).toFixed(1);
  return [
    `${String(nodes).padStart(5)} nodes ${label.padEnd(8)}`,
    `${r.wallMs.toFixed(1).padStart(8)} ms wall, ${r.cpuMs.toFixed(0).padStart(6)} ms CPU per plan (median of ${runs});`,
    `plan.json ${kib(r.planBytes)} KiB + artifacts ${kib(r.artifactBytes)} KiB per node;`,
    `peak RSS of one plan ${rssMiB.toFixed(0)} MiB; load ${load.toFixed(1)}`,
  ].join(' ');
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') {
    const [dist, nodes, runs] = process.argv.slice(3);
    process.stdout.write(JSON.stringify(await child(dist ?? '', Number(nodes), Number(runs))));
    return;
  }
  const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const builds: [string, string][] = [['this', here]];
  const baseline = process.env['BENCH_BASELINE_DIST'];
  if (baseline !== undefined) builds.unshift(['baseline', resolve(baseline)]);
  console.log(
    `${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; CPU is the process's (GC threads included);` +
      ' load is the higher 1-minute load average before and after',
  );
  for (const [label, dist] of builds) console.log(`${label}: ${dist}`);
  const results = new Map<string, Map<number, SizeResult>>(builds.map(([label]) => [label, new Map()]));
  // BENCH_SIZES=10,100 plans only those sizes (runs: the table's, else 3).
  const only = process.env['BENCH_SIZES']?.split(',').map(Number);
  const sizes = only?.map((n) => SIZES.find(([size]) => size === n) ?? [n, 3]) ?? SIZES;
  // BENCH_ROUNDS=3: each build's timed plans in 3 children, the builds taking turns, so a change of load
  // between the two builds' turns weighs on both.
  const rounds = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 1));
  for (const [nodes, runs] of sizes) {
    const load = new Map<string, number>();
    const rss = new Map<string, number>();
    const timed = new Map<string, SizeResult[]>();
    for (let round = 0; round < rounds; round += 1)
      for (const [label, dist] of builds) {
        load.set(label, Math.max(load.get(label) ?? 0, loadavg()[0] ?? 0));
        if (round === 0) rss.set(label, runChild(dist, nodes, 0).maxRssMiB);
        timed.set(label, [...(timed.get(label) ?? []), runChild(dist, nodes, Math.ceil(runs / rounds))]);
        load.set(label, Math.max(load.get(label) ?? 0, loadavg()[0] ?? 0));
      }
    for (const [label] of builds) {
      const parts = timed.get(label) ?? [];
      const first = parts[0];
      if (first === undefined) continue;
      const walls = parts.flatMap((p) => p.walls);
      const cpus = parts.flatMap((p) => p.cpus);
      const r = { ...first, walls, cpus, wallMs: median([...walls]), cpuMs: median([...cpus]) };
      results.get(label)?.set(nodes, r);
      console.log(line(label, nodes, walls.length, r, rss.get(label) ?? 0, load.get(label) ?? 0));
    }
  }
  for (const [label, sizes] of results) {
    const ratio = (a: number, b: number, key: 'wallMs' | 'cpuMs'): string => {
      const [x, y] = [sizes.get(a)?.[key], sizes.get(b)?.[key]];
      return x === undefined || y === undefined ? 'n/a' : (x / y).toFixed(1);
    };
    console.log(
      `${label}: time ratio 1000/100 ${ratio(1000, 100, 'wallMs')} wall, ${ratio(1000, 100, 'cpuMs')} CPU (goal ≤ 11);` +
        ` 5000/1000 ${ratio(5000, 1000, 'wallMs')} wall, ${ratio(5000, 1000, 'cpuMs')} CPU (linear is 5)`,
    );
  }
}

await main();
