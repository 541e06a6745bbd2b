// The download cache end to end on loopback, with the real programs: the
// deployer's cache seeded from a directory of files this test makes (pinned
// in the spec by their SHA256, as an air-gapped site would), the executor's
// upload into the services node's cache directory (LocalTransport), the
// planned TLS script signing the server certificate with a cluster CA, nginx
// running the rendered config, and the planned node-side fetch script
// verifying what it gets. A file whose content does not match its hash is
// refused, named, and nothing is installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateClusterCa, type ClusterCa } from '../src/exec/cluster-ca.js';
import type { RunContext } from '../src/exec/context.js';
import { DownloadCache, fillDownloads } from '../src/exec/downloads.js';
import { EventBus, type ExecEvent } from '../src/exec/events.js';
import { sha256 } from '../src/exec/hash.js';
import { issueServingTls } from '../src/exec/serving-tls.js';
import { runTask } from '../src/exec/task-runner.js';
import { fillServedCache } from '../src/exec/task-steps.js';
import { SERVICES } from '../src/matrix/index.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { nodeDownloadScript } from '../src/plan/tasks/download.js';
import { shellCode } from '../src/util/escape/index.js';
import { registryTlsApply, registryTlsSecrets } from '../src/plan/tasks/registry-scripts.js';
import type { Plan, Task } from '../src/plan/types.js';
import { filesServerConfig } from '../src/render/services/files.js';
import { readSpec } from '../src/spec/read.js';
import { LocalTransport } from '../src/transport/local.js';
import { REPO } from './helpers/shapes.js';

const IDS = ['linux/containerd.tar.gz', 'linux/runc', 'linux/cni-plugins.tgz', 'linux/kubelet'] as const;
/** existing-host-gw's services node, where the planned scripts fetch from. */
const PLANNED_BASE = 'https://192.0.2.5:8443/';

const made = (id: string): Buffer =>
  Buffer.from(`file made by the download cache test for ${id}\n${'x'.repeat(4096)}\n`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => (c.end(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nginx did not listen on ${port}: ${log()}`);
}

function runSh(script: string, env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('sh', ['-s'], {
    input: script,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** runSh without blocking the event loop (a relay in this process must keep running). */
function runShAsync(script: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-s'], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    child.on('close', (status) => resolve({ status, stderr }));
    child.stdin.end(script);
  });
}

describe('download cache: deployer → services node (nginx, HTTPS) → node fetch with checksum', () => {
  let dir: string;
  let model: ClusterModel;
  let plan: Plan;
  let ca: ClusterCa;
  let cache: DownloadCache;
  let nginx: ChildProcess | undefined;
  let nginxLog = '';
  let port: number;
  const root = (): string => join(dir, 'www');
  const served = (): string => join(root(), 'sha256');
  const hashes = new Map<string, string>();
  const events: string[] = [];

  /** The planned node script for a download, its cache address pointed at the loopback server, CA and hash filled in. */
  function nodeScript(id: string, install: string): string {
    const planned = nodeDownloadScript(model, id, shellCode(install)).text;
    assert.equal(planned.split(PLANNED_BASE).length, 2, 'the script fetches from the services node once');
    const local = planned.replace(PLANNED_BASE, `https://127.0.0.1:${port}/`);
    return fillDownloads(local.replace('{{secret:cluster-ca-cert}}', ca.cert.trim()), hashes, id);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubemix-dlcache-'));
    chmodSync(dir, 0o755); // nginx workers (nobody) read the served files
    const seed = join(dir, 'seed');
    mkdirSync(seed);
    // The air-gapped directory holds the files under their upstream names.
    const read = readSpec({
      kind: 'file',
      path: 'existing-host-gw.yaml',
      text: readFileSync(join(REPO, 'examples', 'existing-host-gw.yaml'), 'utf8'),
    });
    const downloads = Object.fromEntries(IDS.map((id) => [id, { sha256: sha256(made(id)) }]));
    model = resolveModel({ ...read, spec: { ...read.spec, downloads } });
    plan = assemblePlan(model).plan;
    for (const id of IDS) {
      const d = plan.downloads?.find((x) => x.id === id);
      assert.ok(d, id);
      writeFileSync(join(seed, new URL(d.url).pathname.split('/').pop() ?? ''), made(id));
    }
    cache = await DownloadCache.open({
      dir: join(dir, 'deployer-cache'),
      seed,
      signal: new AbortController().signal,
      report: (id, action) => void events.push(`${id} ${action}`),
      fetcher: async (url) => {
        throw new Error(`no network in this test: ${url}`);
      },
    });
    for (const d of plan.downloads ?? []) if (d.sha256 !== undefined) hashes.set(d.id, d.sha256);

    // The services node's certificate, issued on the deployer from a fresh cluster CA as the
    // executor does, and installed by the planned script (no CA key reaches the services node).
    ca = generateClusterCa();
    const tls = join(dir, 'tls');
    const tlsInput = { dir: tls, group: 'root', host: 'files.test', ip: '127.0.0.1' };
    const issued = issueServingTls(ca.cert, ca.key, tlsInput.host, tlsInput.ip, SERVICES.registryCertDays);
    const names = registryTlsSecrets(tlsInput);
    const sign = registryTlsApply(tlsInput)
      .text.replace('{{secret:cluster-ca-cert}}', ca.cert.trim())
      .replace(`{{secret:${names.cert}}}`, issued.cert.trim())
      .replace(`{{secret:${names.key}}}`, issued.key.trim());
    const signed = runSh(sign);
    assert.equal(signed.status, 0, signed.stderr);

    port = await freePort();
    mkdirSync(served(), { recursive: true, mode: 0o755 });
    const conf = join(dir, 'nginx.conf');
    writeFileSync(
      conf,
      filesServerConfig({
        listen: `127.0.0.1:${port}`,
        root: root(),
        certificate: join(tls, 'registry.crt'),
        key: join(tls, 'registry.key'),
        pid: join(dir, 'nginx.pid'),
      }),
    );
    const test = spawnSync('nginx', ['-t', '-q', '-e', 'stderr', '-c', conf], { encoding: 'utf8' });
    assert.equal(test.status, 0, `nginx -t: ${test.stderr}`);
    nginx = spawn('nginx', ['-e', 'stderr', '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr?.on('data', (c: Buffer) => (nginxLog += c.toString()));
    await waitForPort(port, nginx, () => nginxLog);
  });

  after(() => {
    if (nginx?.pid !== undefined && nginx.exitCode === null) nginx.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it("the executor fills the services node's cache from the seeded deployer cache once; a second pass uploads nothing", async () => {
    const holder = plan.tasks.find((t) => t.serves !== undefined);
    assert.ok(holder, 'the plan has a download-cache task');
    assert.deepEqual([...(holder.serves?.downloads ?? [])].sort(), (plan.downloads ?? []).map((d) => d.id).sort());
    // Only the Linux files: this test serves what the Linux nodes fetch.
    const task: Task = { ...holder, serves: { dir: served(), downloads: [...IDS] } };
    const bus = new EventBus();
    bus.subscribe((e) => void (e.type === 'download' && events.push(`${e.id} ${e.action}`)));
    const ctx = {
      bus,
      downloads: { byId: new Map((plan.downloads ?? []).map((d) => [d.id, d])), hashes, cache },
    } as unknown as RunContext;
    const t = new LocalTransport();
    assert.equal(await fillServedCache(task, ctx, t), IDS.length);
    assert.deepEqual(events.sort(), IDS.flatMap((id) => [`${id} seeded`, `${id} uploaded`]).sort());
    assert.deepEqual(readdirSync(served()).sort(), IDS.map((id) => hashes.get(id)).sort());
    events.length = 0;
    assert.equal(await fillServedCache(task, ctx, t), 0);
    assert.deepEqual(events, []);
  });

  it("the task's clock counts the bytes sent to the services node as `transfer`, not as kubemix's own preparing", async () => {
    const holder = plan.tasks.find((t) => t.serves !== undefined);
    assert.ok(holder);
    // A slow link: each file sent takes 150 ms.
    const SLOW_MS = 150;
    const local = new LocalTransport();
    const slow = Object.assign(Object.create(local) as LocalTransport, {
      upload: async (u: Parameters<LocalTransport['upload']>[0]) => {
        await new Promise((r) => setTimeout(r, SLOW_MS));
        return local.upload(u);
      },
    });
    const task: Task = {
      ...holder,
      serves: { dir: join(dir, 'timed'), downloads: [...IDS] },
      check: null,
      apply: { ...holder.apply, script: 'true' },
      uploads: [],
      captures: [],
    };
    const seen: Extract<ExecEvent, { type: 'task' }>[] = [];
    const bus = new EventBus();
    bus.subscribe((e) => void (e.type === 'task' && seen.push(e)));
    const ctx = {
      bus,
      journal: undefined,
      secrets: { has: () => false, fill: (script: string) => script },
      redactor: { redact: (text: string) => text },
      down: new Map(),
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      signal: new AbortController().signal,
      transports: new Map([[task.host, slow]]),
      artifacts: new Map(),
      contents: new Map(),
      factsDir: join(dir, 'facts'),
      downloads: {
        byId: new Map((plan.downloads ?? []).map((d) => [d.id, d])),
        hashes,
        cache,
        resolveFor: async () => undefined,
      },
    } as unknown as RunContext;
    assert.equal(await runTask(task, 'h', true, ctx), 'done', JSON.stringify(seen));
    const phases = seen.find((e) => e.state === 'done')?.phasesMs;
    assert.ok(phases !== undefined, JSON.stringify(seen));
    assert.ok(phases.transfer >= SLOW_MS * IDS.length, JSON.stringify(phases));
    assert.ok(phases.prepare < SLOW_MS, JSON.stringify(phases));
  });

  it('a node fetches over HTTPS trusting the cluster CA, past a dead proxy, verifies and installs', () => {
    const dest = join(dir, 'node', 'usr-local-sbin-runc');
    const r = runSh(nodeScript('linux/runc', `install -D -m 0755 "$file" ${dest}`), {
      https_proxy: 'http://127.0.0.1:9',
      HTTPS_PROXY: 'http://127.0.0.1:9',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(dest), made('linux/runc'));
  });

  it('a connection cut mid-transfer is fetched again (curl --retry-all-errors); the SHA256 still decides', async () => {
    // A TCP relay in front of nginx that cuts its first connection after 3000 bytes of the answer: curl's
    // plain --retry leaves that failed (it retries timeouts and 408/429/5xx only), as the tier's run 12 saw.
    let connections = 0;
    const relay = createServer((client) => {
      connections += 1;
      const upstream = connect(port, '127.0.0.1');
      client.pipe(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      if (connections > 1) return void upstream.pipe(client);
      let relayed = 0;
      upstream.on('data', (chunk: Buffer) => {
        relayed += chunk.length;
        if (relayed <= 3000) return void client.write(chunk);
        client.destroy();
        upstream.destroy();
      });
    });
    const relayPort = await new Promise<number>((resolve) =>
      relay.listen(0, '127.0.0.1', () => resolve((relay.address() as { port: number }).port)),
    );
    try {
      const dest = join(dir, 'node', 'runc-after-a-cut');
      const script = nodeScript('linux/runc', `install -D -m 0755 "$file" ${dest}`).replace(
        `https://127.0.0.1:${port}/`,
        `https://127.0.0.1:${relayPort}/`,
      );
      const r = await runShAsync(script);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(connections >= 2, `${connections} connection(s)`);
      assert.deepEqual(readFileSync(dest), made('linux/runc'));
    } finally {
      await new Promise((r) => relay.close(r));
    }
  });

  it('a file whose content does not match its hash is refused, named, and nothing is installed', () => {
    const hash = hashes.get('linux/containerd.tar.gz') ?? '';
    writeFileSync(join(served(), hash), 'tampered on the services node\n', { mode: 0o644 });
    const dest = join(dir, 'node', 'usr-local');
    const r = runSh(nodeScript('linux/containerd.tar.gz', `mkdir -p ${dest}\ntar -C ${dest} -xzf "$file" bin/`));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /sha256 mismatch for containerd\.tar\.gz 2\.3\.2 \(linux\/containerd\.tar\.gz\): got [0-9a-f]{64}, want [0-9a-f]{64}; nothing installed/,
    );
    assert.ok(r.stderr.includes(`want ${hash}`));
    assert.equal(existsSync(dest), false, 'nothing installed');
  });

  it('the planned kubelet-binary task: a tampered cache file is refused and nothing installed; the verified one is installed', () => {
    const node = plan.nodes.find((n) => n.osFamily === 'linux' && n.role !== 'services');
    const planned = plan.tasks.find((t) => t.id === `task-prepare-cluster/${node?.name ?? ''}/kubelet-binary`);
    assert.ok(planned, 'the plan installs kubelet as a release binary');
    const dest = join(dir, 'node', 'usr-local-bin');
    const script = (): string => {
      const local = planned.apply.script
        .replace(PLANNED_BASE, `https://127.0.0.1:${port}/`)
        .replaceAll('/usr/local/bin', dest);
      return fillDownloads(local.replace('{{secret:cluster-ca-cert}}', ca.cert.trim()), hashes, planned.id);
    };
    mkdirSync(dest, { recursive: true });
    const hash = hashes.get('linux/kubelet') ?? '';
    const blob = join(served(), hash);
    const good = readFileSync(blob);
    writeFileSync(blob, 'tampered kubelet on the services node\n');
    const refused = runSh(script());
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      /sha256 mismatch for kubelet 1\.\d+\.\d+ \(linux\/kubelet\): got [0-9a-f]{64}, want [0-9a-f]{64}; nothing installed/,
    );
    assert.equal(existsSync(join(dest, 'kubelet')), false, 'nothing installed');
    writeFileSync(blob, good);
    const r = runSh(script());
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(join(dest, 'kubelet')), made('linux/kubelet'));
  });

  it("a server with another CA's certificate is refused before any byte is used", () => {
    const other = generateClusterCa();
    const planned = nodeScript('linux/cni-plugins.tgz', 'echo installed');
    const r = runSh(planned.replace(ca.cert.trim(), other.cert.trim()));
    assert.notEqual(r.status, 0);
    assert.doesNotMatch(r.stdout, /installed/);
  });

  it('serves only /sha256/<64 hex>: no listing, no other path', () => {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, ca.cert);
    const get = (path: string): string =>
      spawnSync(
        'curl',
        [
          '-sS',
          '--noproxy',
          '*',
          '--cacert',
          caFile,
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          `https://127.0.0.1:${port}${path}`,
        ],
        { encoding: 'utf8' },
      ).stdout;
    assert.equal(get(`/sha256/${hashes.get('linux/runc') ?? ''}`), '200');
    assert.equal(get('/sha256/'), '404');
    assert.equal(get('/'), '404');
    assert.equal(get('/nginx.conf'), '404');
  });
});
