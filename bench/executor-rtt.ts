// Where the executor's wall time goes, in-process and without the CLI: N
// SSH transports (logical hosts over up to 13 sshd test hosts), each running a
// chain of M tasks shaped like bench/executor-vs-ansible.ts (one folded
// check+apply per task), all hosts at once. For each N it prints the
// critical-path time per task minus the task's own sleep, this process's CPU
// per task, the hosts' CPU per task (every test host's sshd and what it
// starts is in one cpuacct cgroup), the event-loop delay (perf_hooks
// monitorEventLoopDelay) and the plain round trips for comparison: one framed
// `true`, and `ssh host true` with OpenSSH (a new connection each).
// BENCH_NODELAY=0,1 compares TCP_NODELAY off and on. Never fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { TestNet, type TestHost } from '../test/harness/netns.js';
import { writeKnownHosts } from '../test/harness/fixture.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';

const NS = (process.env['BENCH_HOSTS'] ?? '1,10,50').split(',').map(Number);
const M = Number(process.env['BENCH_TASKS'] ?? 20);
const NODELAY = (process.env['BENCH_NODELAY'] ?? '1').split(',').map((v) => v === '1');
const SLEEP_MS = 50;
const CGROUP = `/sys/fs/cgroup/cpuacct/kubemix-bench-${process.pid}`;

function hostCpuMs(): number {
  return Number(readFileSync(join(CGROUP, 'cpuacct.usage'), 'utf8')) / 1e6;
}

/** Every process of the test hosts (sshd and, later, what it forks) into the cgroup, pinned to CPU 1. */
function gatherHosts(net: TestNet): void {
  mkdirSync(CGROUP, { recursive: true });
  for (const h of net.hosts)
    for (const pid of execFileSync('ip', ['netns', 'pids', h.ns], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      writeFileSync(join(CGROUP, 'cgroup.procs'), pid);
      spawnSync('taskset', ['-a', '-p', '-c', '1', pid], { stdio: 'ignore' });
    }
}

async function transports(net: TestNet, kh: string, n: number, noDelay: boolean): Promise<SshTransport[]> {
  const knownHosts = await new KnownHostsFile(kh).load();
  const ts = Array.from({ length: n }, (_, i) => {
    const real = net.hosts[i % net.hosts.length] as TestHost;
    return new SshTransport(
      { ...net.connection(real), name: `b${i + 1}` },
      { ...DEFAULT_SSH_OPTIONS, knownHosts, trustNewHosts: false, maxSessions: 1, noDelay },
    );
  });
  // Connected and one session open before timing.
  await Promise.all(ts.map((t) => t.exec({ shell: 'sh', privilege: 'root', script: 'true' })));
  return ts;
}

async function chain(t: SshTransport, dir: string, m: number): Promise<void> {
  for (let i = 1; i <= m; i++) {
    const req = { shell: 'sh', privilege: 'root', timeoutMs: 60_000 } as const;
    const r = await t.converge(
      { ...req, script: `test -f ${dir}/t${i}` },
      { ...req, script: `mkdir -p ${dir}; echo t${i} >> ${dir}/log; sleep ${SLEEP_MS / 1000}; touch ${dir}/t${i}` },
    );
    if (r.code !== 0) throw new Error(`task ${i} on ${t.host}: ${r.stderr}`);
  }
}

interface Run {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly hostMs: number;
  readonly loopP99: number;
  readonly loopMax: number;
}

async function run(net: TestNet, ts: SshTransport[], tag: string, m: number): Promise<Run> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const host0 = hostCpuMs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  loop.enable();
  await Promise.all(ts.map((t, i) => chain(t, join(net.hosts[i % net.hosts.length]?.dir ?? '', `${tag}-${i}`), m)));
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  return {
    wallMs: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    hostMs: hostCpuMs() - host0,
    loopP99: loop.percentile(99) / 1e6,
    loopMax: loop.max / 1e6,
  };
}

function plainSsh(net: TestNet, kh: string): number {
  const h = net.hosts[0] as TestHost;
  const c = net.connection(h);
  const args = ['-i', net.clientKey, '-o', `UserKnownHostsFile=${kh}`, '-o', 'StrictHostKeyChecking=yes'];
  args.push('-o', 'BatchMode=yes', '-p', String(c.port), `root@${c.address}`, 'true');
  const t0 = performance.now();
  for (let i = 0; i < 10; i++) execFileSync('ssh', args, { stdio: 'ignore' });
  return (performance.now() - t0) / 10;
}

async function framedTrue(ts: SshTransport[]): Promise<number> {
  const t = ts[0] as SshTransport;
  const t0 = performance.now();
  for (let i = 0; i < 40; i++) await t.exec({ shell: 'sh', privilege: 'root', script: 'true' });
  return (performance.now() - t0) / 40;
}

async function main(): Promise<void> {
  spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  const net = await TestNet.create(Math.min(13, Math.max(...NS)));
  const out: string[] = [];
  try {
    gatherHosts(net);
    const kh = writeKnownHosts(net);
    out.push(`per command on one idle host: ssh host true ${plainSsh(net, kh).toFixed(1)} ms (new connection each)`);
    for (const n of NS)
      for (const noDelay of NODELAY) {
        const ts = await transports(net, kh, n, noDelay);
        const framed = await framedTrue(ts);
        const tag = `n${n}-${noDelay ? 'nd' : 'ng'}`;
        const one = await run(net, ts, `${tag}-a`, M);
        const two = await run(net, ts, `${tag}-b`, 2 * M);
        const perTask = (two.wallMs - one.wallMs) / M - SLEEP_MS;
        const tasks = n * M;
        out.push(
          `N=${String(n).padStart(2)} nodelay=${noDelay ? 'on ' : 'off'}: framed 'true' ${framed.toFixed(1)} ms; ` +
            `critical-path overhead ${perTask.toFixed(1)} ms/task; ` +
            `client CPU ${((two.cpuMs - one.cpuMs) / tasks).toFixed(2)} ms/task; ` +
            `hosts' CPU ${((two.hostMs - one.hostMs) / tasks).toFixed(1)} ms/task ` +
            `(${(((two.hostMs - one.hostMs) / (two.wallMs - one.wallMs)) * 100).toFixed(0)}% of one core); ` +
            `event loop p99 ${two.loopP99.toFixed(1)} ms, max ${two.loopMax.toFixed(1)} ms`,
        );
        process.stderr.write(`${out[out.length - 1] ?? ''}\n`);
        await Promise.all(ts.map((t) => t.close()));
      }
    process.stdout.write(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await net.cleanup();
    try {
      rmdirSync(CGROUP);
    } catch {
      // Processes still in it (a host not yet gone): the kernel removes nothing; left for the next boot.
    }
  }
}

await main();
