// N hosts × M tasks, run by kubemix and by Debian's ansible-playbook against
// the same sshd test hosts in one run, for N = 1, 10 and 50 (BENCH_HOSTS).
// Ansible at its best: forks ≥ N, pipelining, ControlPersist, strategy free,
// no fact gathering, host key checking ON against the test keys. Prints times
// and ratios; never fails. Also measures the framed session against one exec
// channel per command.
//
// More than 13 hosts do not fit one test net: host names beyond the real sshd
// hosts share them round robin (each name has its own SSH connection, work
// directory and tasks, so kubemix sees N hosts). The hosts' sshd and shells
// run on CPU 1 and kubemix on CPU 0 (taskset), so the hosts' work does not
// count as kubemix's; kubemix's own CPU time is read from the kernel.
// Per-task overhead on the critical path is measured as a difference: runs
// with M and 2M chained tasks per host, (T(2M) − T(M)) / M minus the command's
// own sleep, so start-up and connecting (reported apart) do not blur it.
// The hosts' CPU per task is read from a cpuacct cgroup holding every test
// host's sshd and what it starts; the CLI's event-loop delay from a preload
// (loop-delay.ts). At N=50 Ansible runs BENCH_ANSIBLE_TASKS_50 (default 5)
// tasks per host, compared with kubemix's time for as many tasks (start-up
// + connect + that many times its per-task time, from the M/2M runs).
// Since all test hosts share CPU 1, what a task costs a host is paid N times
// per round of tasks on that core: past ~10 hosts the critical path grows
// with N for any executor. So the same tasks also run on a floor
// (floor-executor.ts: one session per host, one round trip per task, the
// check and apply each in their own `sh`, nothing else), measured the same
// way; kubemix's own overhead is its per-task time above the floor's.
// BENCH_ROUNDS (default 3): each N runs that many times, the builds and the
// floor taking turns; every figure printed is the median of the rounds.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HostConnection } from '../src/model/types.js';
import { TestNet, type TestHost } from '../test/harness/netns.js';
import { buildPlan, taskId, writePlanDir, type TaskInput } from '../test/harness/plan-builder.js';
import { newStateDir, writeKnownHosts } from '../test/harness/fixture.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';
import { FloorHost } from './floor-executor.js';

const NS = (process.env['BENCH_HOSTS'] ?? '1,10,50').split(',').map(Number);
const ANSIBLE_NS = (process.env['BENCH_ANSIBLE_HOSTS'] ?? '10,50').split(',').map(Number);
const M = Number(process.env['BENCH_TASKS'] ?? 20);
/** Another build's bin/kubemix.js (e.g. a worktree of the previous commit): run side by side with this one. */
const BASELINE = process.env['BENCH_BASELINE'];
const SLEEP = 0.05;
const REAL_HOSTS = 13;
const ANSIBLE_TASKS_50 = Number(process.env['BENCH_ANSIBLE_TASKS_50'] ?? 5);
/** Rounds per N (BENCH_ROUNDS): each figure is their median. */
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 3));
const CGROUP = `/sys/fs/cgroup/cpuacct/kubemix-bench-${process.pid}`;
const LOOP_PRELOAD = new URL('./loop-delay.js', import.meta.url).href;

/** CPU time of everything in the test hosts' cgroup, ms. */
function hostCpuMs(): number {
  return Number(readFileSync(join(CGROUP, 'cpuacct.usage'), 'utf8')) / 1e6;
}

/** N logical hosts over the real sshd hosts: name, connection and a work directory each. */
interface BenchHost {
  readonly name: string;
  readonly conn: HostConnection;
  readonly dir: string;
}

function benchHosts(net: TestNet, n: number, run: string): BenchHost[] {
  return Array.from({ length: n }, (_, i) => {
    const real = net.hosts[i % net.hosts.length] as TestHost;
    const name = `b${i + 1}`;
    return { name, conn: { ...net.connection(real), name }, dir: join(real.dir, `${run}-${name}`) };
  });
}

/** The plan hash function of the build whose CLI is `bin` (its dist/ beside bin/). */
async function planHashOf(bin: string): Promise<(body: object) => string> {
  const dist = join(dirname(resolve(bin)), '..', 'dist', 'src', 'plan', 'hash.js');
  return ((await import(pathToFileURL(dist).href)) as { planHash: (body: object) => string }).planHash;
}

/** Task `i` of a host's chain: its check and its apply (the same for kubemix and the floor). */
function benchScripts(dir: string, i: number): [string, string] {
  return [`test -f ${dir}/t${i}`, `mkdir -p ${dir}; echo t${i} >> ${dir}/log; sleep ${SLEEP}; touch ${dir}/t${i}`];
}

/** USER_HZ: the unit of /proc/PID/stat times. */
const TICKS_PER_SECOND = 100;

/** CPU of this process's finished children (cutime + cstime of /proc/self/stat). */
function childCpuMs(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

/** Pins every process in the test hosts' namespaces (sshd, sessions, shells) to CPU 1, in the hosts' cgroup. */
function pinHosts(net: TestNet): void {
  mkdirSync(CGROUP, { recursive: true });
  for (const h of net.hosts) {
    for (const pid of execFileSync('ip', ['netns', 'pids', h.ns], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      try {
        writeFileSync(join(CGROUP, 'cgroup.procs'), pid);
      } catch (error) {
        // Listed, then gone before it was moved (a short-lived process in the namespace).
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') continue;
        throw error;
      }
      spawnSync('taskset', ['-a', '-p', '-c', '1', pid], { stdio: 'ignore' });
    }
  }
}

function ensureAnsible(): void {
  if (spawnSync('ansible-playbook', ['--version']).status === 0) return;
  process.stderr.write('installing Debian ansible for the bench\n');
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'ansible'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function time(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

interface KubemixRun {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly hostMs: number;
  readonly loop: { readonly p99: number; readonly max: number };
}

async function kubemix(
  net: TestNet,
  kh: string,
  n: number,
  m: number,
  bin: string,
  round: number,
): Promise<KubemixRun> {
  const run = `km${bin === 'bin/kubemix.js' ? '' : 'base'}${n}x${m}r${round}`;
  const hosts = benchHosts(net, n, run);
  const tasks: TaskInput[] = [];
  for (const h of hosts) {
    for (let i = 1; i <= m; i++) {
      const after = i === 1 ? [] : [taskId({ host: h.name, name: `t${i - 1}` })];
      const [check, apply] = benchScripts(h.dir, i);
      tasks.push({ host: h.name, name: `t${i}`, after, check, apply });
    }
  }
  const planDir = join(net.root, `bench-plan-${run}`);
  const built = buildPlan(
    hosts.map((h) => h.conn),
    tasks,
  );
  // Hashed by the build that runs it: a baseline may define the plan hash otherwise (before: canonical JSON).
  const { apiVersion, kind, hash: _ours, ...rest } = built.plan;
  const body = { apiVersion, kind, ...rest };
  await writePlanDir(planDir, { ...built, plan: { apiVersion, kind, hash: (await planHashOf(bin))(body), ...rest } });
  const args = [
    '-c',
    '0',
    process.execPath,
    '--import',
    LOOP_PRELOAD,
    bin,
    'up',
    '--plan',
    planDir,
    '--state-dir',
    newStateDir(net),
    '--known-hosts',
    kh,
    '--concurrency',
    '1',
  ];
  const cpu = childCpuMs();
  const host = hostCpuMs();
  const loopFile = join(net.root, `loop-${run}.json`);
  const wallMs = time(() =>
    execFileSync('taskset', args, {
      stdio: ['ignore', 'ignore', process.env['BENCH_STDERR'] ? 'inherit' : 'ignore'],
      env: { ...process.env, KUBEMIX_BENCH_LOOP: loopFile },
    }),
  );
  const loop = JSON.parse(readFileSync(loopFile, 'utf8')) as KubemixRun['loop'];
  return { wallMs, cpuMs: childCpuMs() - cpu, hostMs: hostCpuMs() - host, loop };
}

interface FloorRun {
  readonly wallMs: number;
  readonly hostMs: number;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const spread = (xs: readonly number[]): string =>
  `${xs.length} rounds, ${Math.min(...xs).toFixed(1)} to ${Math.max(...xs).toFixed(1)}`;

/** The floor (floor-executor.ts) on the same hosts and tasks: connected first, then the chains timed. */
async function floor(net: TestNet, kh: string, n: number, m: number, round: number): Promise<FloorRun> {
  const hosts = benchHosts(net, n, `fl${n}x${m}r${round}`);
  const knownHosts = await new KnownHostsFile(kh).load();
  const sessions = await Promise.all(hosts.map((h) => FloorHost.open(h.conn, knownHosts)));
  try {
    const host = hostCpuMs();
    const t0 = process.hrtime.bigint();
    await Promise.all(
      hosts.map(async (h, i) => {
        for (let t = 1; t <= m; t++) {
          const [check, apply] = benchScripts(h.dir, t);
          const code = await sessions[i]?.run(check, apply);
          if (code !== 0) throw new Error(`floor: task t${t} on ${h.name} exited ${code}`);
        }
      }),
    );
    return { wallMs: Number(process.hrtime.bigint() - t0) / 1e6, hostMs: hostCpuMs() - host };
  } finally {
    for (const s of sessions) s.close();
  }
}

function ansible(net: TestNet, kh: string, n: number, m: number): number {
  const hosts = benchHosts(net, n, `an${n}`);
  const dir = join(net.root, `ansible-${n}`);
  mkdirSync(dir, { recursive: true });
  const inventory = [
    '[test]',
    ...hosts.map(
      (h) =>
        `${h.name} ansible_host=${h.conn.address} ansible_user=root ansible_ssh_private_key_file=${net.clientKey} d=${h.dir}`,
    ),
  ].join('\n');
  writeFileSync(join(dir, 'inventory.ini'), `${inventory}\n`);
  const sshArgs = `-o ControlMaster=auto -o ControlPersist=120s -o UserKnownHostsFile=${kh} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes`;
  const cfg = [
    '[defaults]',
    `forks = ${n}`,
    'host_key_checking = True',
    'interpreter_python = /usr/bin/python3',
    'strategy = free',
    'gathering = explicit',
    'retry_files_enabled = False',
    '[ssh_connection]',
    'pipelining = True',
    `ssh_args = ${sshArgs}`,
    `control_path_dir = ${dir}/cp`,
  ];
  writeFileSync(join(dir, 'ansible.cfg'), `${cfg.join('\n')}\n`);
  const tasks = Array.from(
    { length: m },
    (_, i) =>
      `    - name: t${i + 1}\n      ansible.builtin.shell: mkdir -p {{ d }}; echo t${i + 1} >> {{ d }}/log; sleep ${SLEEP}; touch {{ d }}/t${i + 1}\n      args:\n        creates: "{{ d }}/t${i + 1}"`,
  );
  writeFileSync(
    join(dir, 'play.yml'),
    `- hosts: all\n  gather_facts: false\n  strategy: free\n  tasks:\n${tasks.join('\n')}\n`,
  );
  const env = {
    ...process.env,
    ANSIBLE_CONFIG: join(dir, 'ansible.cfg'),
    ANSIBLE_LOCAL_TEMP: join(dir, 'tmp'),
    ANSIBLE_HOME: join(dir, 'home'),
  };
  try {
    const args = ['-c', '0', 'ansible-playbook', '-i', join(dir, 'inventory.ini'), join(dir, 'play.yml')];
    return time(() => execFileSync('taskset', args, { env, stdio: ['ignore', 'ignore', 'inherit'] }));
  } finally {
    // Stop the ControlPersist masters Ansible left behind (they would keep the test namespaces alive).
    for (const sock of existsSync(join(dir, 'cp')) ? readdirSync(join(dir, 'cp')) : []) {
      spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${join(dir, 'cp', sock)}`, 'kubemix-bench'], {
        stdio: 'ignore',
      });
    }
  }
}

async function sessionVsChannel(net: TestNet, kh: string): Promise<{ session: number; channel: number }> {
  const h = net.hosts[0] as TestHost;
  const t = new SshTransport(net.connection(h), {
    ...DEFAULT_SSH_OPTIONS,
    knownHosts: await new KnownHostsFile(kh).load(),
    trustNewHosts: false,
    maxSessions: 1,
  });
  const runs = 40;
  const req = { shell: 'sh', privilege: 'root', script: 'true' } as const;
  await t.exec(req);
  await t.execChannel(req);
  let t0 = Date.now();
  for (let i = 0; i < runs; i++) await t.exec(req);
  const session = (Date.now() - t0) / runs;
  t0 = Date.now();
  for (let i = 0; i < runs; i++) await t.execChannel(req);
  const channel = (Date.now() - t0) / runs;
  await t.close();
  return { session, channel };
}

async function main(): Promise<void> {
  // The floor runs in this process: on kubemix's core, as kubemix does.
  spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  ensureAnsible();
  const net = await TestNet.create(Math.min(REAL_HOSTS, Math.max(...NS)));
  try {
    pinHosts(net);
    const kh = writeKnownHosts(net);
    const per = await sessionVsChannel(net, kh);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const out: string[] = [
      `load average at the start ${load}; ${readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? ''}`,
      `tasks per host M=${M} (and 2M for the per-task difference), each command sleeps ${SLEEP * 1000} ms; hosts on CPU 1, kubemix and ansible on CPU 0`,
      `per command, 'true' on one host: framed session ${per.session.toFixed(1)} ms vs one exec channel each ${per.channel.toFixed(1)} ms (${(per.channel / per.session).toFixed(1)}x)`,
    ];
    const perTask = new Map<number, number>();
    const floorPerTask = new Map<number, number>();
    const fixedMs = new Map<number, number>();
    const oneMs = new Map<number, number>();
    const builds: [string, string][] = [
      ...(BASELINE === undefined ? [] : ([['baseline', BASELINE]] as [string, string][])),
      ['kubemix', 'bin/kubemix.js'],
    ];
    for (const n of NS) {
      // Rounds, the builds and the floor taking turns: one M/2M difference is a few hundred ms of a few seconds'
      // runs, so each figure is the median of ROUNDS (the spread printed beside it).
      const runs = new Map<string, { one: KubemixRun; two: KubemixRun }[]>();
      const floors: { one: FloorRun; two: FloorRun }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, bin] of builds) {
          pinHosts(net);
          const one = await kubemix(net, kh, n, M, bin, round);
          const two = await kubemix(net, kh, n, 2 * M, bin, round);
          runs.set(label, [...(runs.get(label) ?? []), { one, two }]);
        }
        pinHosts(net);
        floors.push({ one: await floor(net, kh, n, M, round), two: await floor(net, kh, n, 2 * M, round) });
      }
      for (const [label] of builds) {
        const rs = runs.get(label) ?? [];
        const overheads = rs.map((r) => (r.two.wallMs - r.one.wallMs) / M - SLEEP * 1000);
        const overhead = median(overheads);
        const one = median(rs.map((r) => r.one.wallMs));
        const fixed = one - M * (overhead + SLEEP * 1000);
        if (label === 'kubemix') {
          perTask.set(n, overhead);
          fixedMs.set(n, fixed);
          oneMs.set(n, one);
        }
        const cpu = median(rs.map((r) => (r.two.cpuMs - r.one.cpuMs) / (n * M)));
        const host = median(rs.map((r) => (r.two.hostMs - r.one.hostMs) / (n * M)));
        const busy = median(rs.map((r) => (r.two.hostMs - r.one.hostMs) / (r.two.wallMs - r.one.wallMs)));
        out.push(
          `N=${String(n).padStart(2)}: ${label.padEnd(8)} ${(one / 1000).toFixed(2)} s (M); ` +
            `critical-path overhead ${overhead.toFixed(1)} ms per task (${spread(overheads)}); start-up + connect ≈ ${(fixed / 1000).toFixed(2)} s; ` +
            `${label} CPU per task ${cpu.toFixed(2)} ms; hosts' CPU per task ${host.toFixed(1)} ms (hosts' core busy ${(busy * 100).toFixed(0)}%); ` +
            `event loop delay p99 ${median(rs.map((r) => r.two.loop.p99)).toFixed(1)} ms`,
        );
        process.stderr.write(`${out[out.length - 1] ?? ''}\n`);
      }
      const floorOverheads = floors.map((f) => (f.two.wallMs - f.one.wallMs) / M - SLEEP * 1000);
      const floorTask = median(floorOverheads);
      floorPerTask.set(n, floorTask);
      out.push(
        `N=${String(n).padStart(2)}: floor    critical-path overhead ${floorTask.toFixed(1)} ms per task (${spread(floorOverheads)}); ` +
          `hosts' CPU per task ${median(floors.map((f) => (f.two.hostMs - f.one.hostMs) / (n * M))).toFixed(1)} ms; ` +
          `kubemix above the floor ${((perTask.get(n) ?? 0) - floorTask).toFixed(1)} ms per task`,
      );
      process.stderr.write(`${out[out.length - 1] ?? ''}\n`);
      if (ANSIBLE_NS.includes(n)) {
        const m = n >= 50 ? ANSIBLE_TASKS_50 : M;
        const an = ansible(net, kh, n, m);
        const km = m === M ? (oneMs.get(n) ?? 0) : (fixedMs.get(n) ?? 0) + m * ((perTask.get(n) ?? 0) + SLEEP * 1000);
        out.push(
          `N=${String(n).padStart(2)}: ansible-playbook (${m} tasks per host) ${(an / 1000).toFixed(2)} s; kubemix ${m === M ? '' : 'estimated '}${(km / 1000).toFixed(2)} s; ratio ansible / kubemix ${(an / km).toFixed(1)}x`,
        );
        process.stderr.write(`${out[out.length - 1] ?? ''}\n`);
      }
    }
    const first = perTask.get(NS[0] ?? 1) ?? 0;
    for (const n of NS.slice(1))
      out.push(
        `per-task overhead N=${n} / N=${NS[0]}: ${((perTask.get(n) ?? 0) / Math.max(first, 0.1)).toFixed(2)}x (flat is 1)`,
      );
    out.push(
      `kubemix above the floor, ms per task: ${NS.map((n) => `N=${n} ${((perTask.get(n) ?? 0) - (floorPerTask.get(n) ?? 0)).toFixed(1)}`).join(', ')} (goal ≤ 30, flat)`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await net.cleanup();
    try {
      rmdirSync(CGROUP);
    } catch {
      // A host process not yet gone keeps the cgroup; it is empty and harmless.
    }
  }
}

await main();
