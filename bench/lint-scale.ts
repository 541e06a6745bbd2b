// Lint 1,000 and 10,000 generated pod templates in one run and print the
// times and their ratio (near-linear means ~10); then single files of 1 and
// 4 MiB read as the CLI reads them (time, MiB/s, peak RSS), and a 60 MiB
// file, which the input bound refuses before parsing. Not a pass/fail test.
// Run: npm run bench:lint
// LINT_BENCH_UNBOUNDED=1 lifts the bound, to measure what the 60 MiB file
// costs without it (minutes and gigabytes).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readInputs } from '../src/lint/inputs.js';
import { lintClusterFor } from '../src/lint/cluster.js';
import { lintSources } from '../src/lint/engine.js';
import type { SourceText } from '../src/lint/source.js';

const PER_FILE = 100;

/** One workload; every fourth is a Windows one, some unplaced, one Service per ten workloads. */
function workload(i: number): string {
  const windows = i % 4 === 0;
  const placement =
    i % 3 === 0
      ? ''
      : windows
        ? '      os: {name: windows}\n      nodeSelector: {kubernetes.io/os: windows}\n      tolerations: [{key: os, operator: Exists}]\n'
        : '      os: {name: linux}\n      nodeSelector: {kubernetes.io/os: linux}\n';
  const image = windows ? 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022' : 'nginx:1.27';
  const doc = `# Source: bench/templates/app-${i}.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-${i}
  namespace: ns-${i % 50}
spec:
  replicas: ${(i % 7) + 1}
  template:
    metadata:
      labels: {app: app-${i}, group: g-${Math.floor(i / 10)}}
    spec:
${placement}      containers:
        - name: main
          image: ${image}
          securityContext:
            runAsUser: 1000
`;
  const service =
    i % 10 === 0
      ? `---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-${i}, namespace: ns-${i % 50}}\nspec:\n  externalTrafficPolicy: Local\n  selector: {group: g-${Math.floor(i / 10)}}\n`
      : '';
  return `---\n${doc}${service}`;
}

function corpus(templates: number): SourceText[] {
  const files: SourceText[] = [];
  for (let start = 0; start < templates; start += PER_FILE) {
    let text = '';
    for (let i = start; i < Math.min(start + PER_FILE, templates); i += 1) text += workload(i);
    files.push({ path: `bench/file-${String(start / PER_FILE).padStart(4, '0')}.yaml`, text });
  }
  return files;
}

async function time(templates: number): Promise<{ ms: number; findings: number; templates: number }> {
  const sources = corpus(templates);
  const cluster = lintClusterFor(['windows-2022', 'windows-2025']);
  const start = performance.now();
  const report = await lintSources(sources, { cluster });
  return { ms: performance.now() - start, findings: report.findings.length, templates: report.templates };
}

/** One file of about `mib` MiB, read and linted as `kubemix lint FILE` does. */
async function bigFile(mib: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-lint-bench-'));
  const path = join(dir, 'big.yaml');
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < mib * 1024 * 1024; i += 1) {
    const doc = workload(i);
    parts.push(doc);
    size += doc.length;
  }
  writeFileSync(path, parts.join(''));
  const unbounded = process.env['LINT_BENCH_UNBOUNDED'] === '1';
  const start = performance.now();
  const cpu = process.cpuUsage();
  const inputs = await readInputs([path], {
    cwd: dir,
    readStdin: undefined,
    ...(unbounded ? { maxBytes: Infinity } : {}),
  });
  const report = await lintSources(inputs.files, { cluster: lintClusterFor(['windows-2022', 'windows-2025']) });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  rmSync(dir, { recursive: true });
  const peak = (process.resourceUsage().maxRSS / 1024).toFixed(0);
  const outcome =
    inputs.unreadable.length > 0
      ? `refused (${inputs.unreadable[0]?.rule ?? ''})`
      : `${report.templates} templates, ${(size / 1024 / 1024 / (cpuMs / 1000)).toFixed(2)} MiB per CPU second`;
  return `${mib.toString().padStart(3)} MiB file: ${ms.toFixed(0).padStart(7)} ms (CPU ${cpuMs.toFixed(0)} ms), ${outcome}; peak RSS so far ${peak} MiB`;
}

await time(200); // warm up the JIT so the 1k run is not charged for it
const small = await time(1_000);
const large = await time(10_000);
const fmt = (r: { ms: number; findings: number; templates: number }): string =>
  `${String(r.templates).padStart(6)} pod templates: ${r.ms.toFixed(0).padStart(6)} ms (${(r.ms / r.templates).toFixed(3)} ms/template, ${r.findings} findings)`;
process.stdout.write(`${fmt(small)}\n${fmt(large)}\nratio 10k/1k: ${(large.ms / small.ms).toFixed(2)} (10 = linear)\n`);
for (const mib of [1, 4, 60]) process.stdout.write(`${await bigFile(mib)}\n`);
