// Webhook throughput and p99 latency with a warm image cache, under load from
// wrk (a second process), next to a plain Node HTTPS server that answers a
// fixed AdmissionReview: same machine, same run, same load. Prints both and
// the ratio (goal: guard p99 ≤ 2× plain). Never pass/fail.
// Run: npm run bench:guard   (needs wrk: apt-get install wrk)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGuardServer } from '../src/guard/server.js';
import { lintClusterFor } from '../src/lint/cluster.js';
import { ImageCache } from '../src/registry/cache.js';
import { buildImageResolver } from '../src/registry/setup.js';
import { makePki } from '../test/helpers/pki.js';

const DURATION = process.env['BENCH_SECONDS'] ?? '10';
const CONNECTIONS = process.env['BENCH_CONNECTIONS'] ?? '16';
const IMAGE = 'registry.example.invalid/team/app:1';

interface Result {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

function review(): string {
  const object = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: IMAGE, ports: [{ containerPort: 8080 }] }] },
      },
    },
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'bench',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      operation: 'CREATE',
      namespace: 'default',
      object,
    },
  });
}

/** wrk's latency distribution: `99%  3.21ms` (us, ms or s). */
function parseWrk(out: string): Result {
  const ms = (label: string): number => {
    const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    if (m === null) throw new Error(`no ${label} in wrk output:\n${out}`);
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  return { rps, p50: ms('50%'), p99: ms('99%') };
}

const run = promisify(execFile);

/** Asynchronous on purpose: the server under test shares this process's event loop. */
async function load(port: number, script: string): Promise<Result> {
  await run('wrk', ['-t1', '-c4', '-d2s', '-s', script, `https://127.0.0.1:${port}/mutate`]);
  const { stdout } = await run('wrk', [
    '-t2',
    `-c${CONNECTIONS}`,
    `-d${DURATION}s`,
    '--latency',
    '-s',
    script,
    `https://127.0.0.1:${port}/mutate`,
  ]);
  return parseWrk(stdout);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-bench-guard-'));
  try {
    const pki = makePki(dir);
    const tls = pki.server('bench');
    const cert = readFileSync(tls.cert, 'utf8');
    const key = readFileSync(tls.key, 'utf8');
    const body = review();
    writeFileSync(join(dir, 'body.json'), body);
    const script = join(dir, 'post.lua');
    writeFileSync(
      script,
      `local f = io.open("${join(dir, 'body.json')}")\nwrk.body = f:read("*a")\nf:close()\nwrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n`,
    );

    // Warm cache: the registry resolver finds a fresh tag → digest → platforms entry.
    const cacheDir = join(dir, 'cache');
    new ImageCache(cacheDir, 3_600_000).store('registry.example.invalid/team/app:1', {
      digest: `sha256:${'b'.repeat(64)}`,
      platforms: [{ os: 'linux', architecture: 'amd64' }],
    });
    const resolver = buildImageResolver({
      offline: false,
      credentials: new Map(),
      ca: [],
      mirrors: {},
      cacheDir,
      ttlMs: 3_600_000,
      timeoutMs: 1000,
      warn: () => undefined,
      // As `guard serve` runs it: each lookup raced against its 3 s limit.
      lookupBudgetMs: 3_000,
    });

    const fixed = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'bench', allowed: true },
    });
    const plain = createServer({ cert, key }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(fixed));
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const plainPort = (plain.address() as { port: number }).port;
    const baseline = await load(plainPort, script);
    await new Promise((r) => plain.close(r));

    const guard = createGuardServer({
      cert,
      key,
      resolver,
      cluster: lintClusterFor(['windows-2022']),
      log: () => undefined,
    });
    const guardPort = await guard.listen('127.0.0.1', 0);
    const webhook = await load(guardPort, script);
    await guard.close();

    const row = (name: string, r: Result): string =>
      `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms`;
    process.stdout.write(
      `wrk: 2 threads, ${CONNECTIONS} connections, ${DURATION} s each, POST /mutate (Deployment, warm image cache)\n`,
    );
    process.stdout.write(`${row('plain Node HTTPS (fixed)', baseline)}\n${row('kubemix guard /mutate', webhook)}\n`);
    process.stdout.write(
      `ratio guard/plain: p99 ${(webhook.p99 / baseline.p99).toFixed(2)}x (goal <= 2x), throughput ${(webhook.rps / baseline.rps).toFixed(2)}x\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
