// Start-up of the CLI for the commands a user runs dozens of times a day,
// measured side by side with a bare `node` start in one run: wall time and the
// process's own CPU (user + system, from the kernel's rusage of the child).
// Goal: `--version`, `--help` and `validate` of a small spec ≤ 200 ms on an
// idle machine. Not a pass/fail test. BENCH_BASELINE=<another build's
// bin/kubemix.js> measures that build's commands too, interleaved run by run
// with this one's, so both see the same load.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/kubemix.js', import.meta.url));
const SPEC = fileURLToPath(new URL('../../examples/k8s-libvirt-1-1-1.yaml', import.meta.url));
const RUNS = 15;
const BASELINE = process.env['BENCH_BASELINE'];

const commands = (label: string, bin: string): [string, string[]][] => [
  [`${label} --version`, [bin, '--version']],
  [`${label} --help`, [bin, '--help']],
  [`${label} validate SPEC`, [bin, 'validate', SPEC]],
  [`${label} plan SPEC`, [bin, 'plan', SPEC]],
];
const cases: readonly [string, readonly string[]][] = [
  ['node (bare start)', ['-e', '0']],
  ...(BASELINE === undefined
    ? commands('kubemix', BIN)
    : commands('baseline', BASELINE).flatMap((b, i) => [b, commands('kubemix', BIN)[i] as [string, string[]]])),
];

function measure(args: readonly string[]): { wallMs: number; cpuMs: number } {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const ticks = childTicks();
    const start = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
    walls.push(performance.now() - start);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
    cpus.push(((childTicks() - ticks) * 1000) / TICKS_PER_SECOND);
  }
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { wallMs: median(walls), cpuMs: median(cpus) };
}

/** USER_HZ on Linux: the unit of /proc/PID/stat times. */
const TICKS_PER_SECOND = 100;

/** CPU of this process's finished children (cutime + cstime of /proc/self/stat): Node has no RUSAGE_CHILDREN. */
function childTicks(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  // Fields after "(comm) ": state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[13]) + Number(fields[14]);
}

const base = measure(cases[0]?.[1] ?? []);
console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
console.log(`start-up, median of ${RUNS} runs (wall | CPU of the process; ratio to a bare node start)`);
for (const [name, args] of cases) {
  const m = name.startsWith('node') ? base : measure(args);
  console.log(
    `${name.padEnd(24)} ${m.wallMs.toFixed(0).padStart(5)} ms wall (${(m.wallMs / base.wallMs).toFixed(1)}×) | ${m.cpuMs.toFixed(0).padStart(5)} ms CPU`,
  );
}
