// N hosts × M tasks, run by kubemix and by Debian's ansible-playbook against
// the same sshd test hosts in one run. Ansible at its best: forks ≥ N,
// pipelining, ControlPersist, strategy free, no fact gathering, host key
// checking ON against the test keys. Prints times and ratios; never fails.
// Also measures the framed session against one exec channel per command.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, type TestHost } from '../test/harness/netns.js';
import { buildPlan, taskId, writePlanDir, type TaskInput } from '../test/harness/plan-builder.js';
import { newStateDir, writeKnownHosts } from '../test/harness/fixture.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';

const N = Number(process.env['BENCH_HOSTS'] ?? 10);
const M = Number(process.env['BENCH_TASKS'] ?? 20);
const SLEEP = 0.05;

function ensureAnsible(): void {
  if (spawnSync('ansible-playbook', ['--version']).status === 0) return;
  process.stderr.write('installing Debian ansible for the bench\n');
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'ansible'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function time(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function kubemix(net: TestNet, kh: string): Promise<number> {
  const tasks: TaskInput[] = [];
  for (const h of net.hosts) {
    for (let i = 1; i <= M; i++) {
      const dir = join(h.dir, 'km');
      tasks.push({ host: h.name, name: `t${i}`, after: i === 1 ? [] : [taskId({ host: h.name, name: `t${i - 1}` })], check: `test -f ${dir}/t${i}`, apply: `mkdir -p ${dir}; echo t${i} >> ${dir}/log; sleep ${SLEEP}; touch ${dir}/t${i}` });
    }
  }
  const planDir = join(net.root, 'bench-plan');
  await writePlanDir(planDir, buildPlan(net.hosts.map((h) => net.connection(h)), tasks));
  const args = ['bin/kubemix.js', 'up', '--plan', planDir, '--state-dir', newStateDir(net), '--known-hosts', kh, '--concurrency', '1'];
  return time(() => execFileSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'ignore'] }));
}

function ansible(net: TestNet, kh: string): number {
  const dir = join(net.root, 'ansible');
  mkdirSync(dir, { recursive: true });
  const inventory = ['[test]', ...net.hosts.map((h) => `${h.name} ansible_host=${h.address} ansible_user=root ansible_ssh_private_key_file=${net.clientKey} d=${join(h.dir, 'ansible')}`)].join('\n');
  writeFileSync(join(dir, 'inventory.ini'), `${inventory}\n`);
  const sshArgs = `-o ControlMaster=auto -o ControlPersist=120s -o UserKnownHostsFile=${kh} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes`;
  const cfg = [
    '[defaults]', `forks = ${N}`, 'host_key_checking = True', 'interpreter_python = /usr/bin/python3', 'strategy = free',
    'gathering = explicit', 'retry_files_enabled = False',
    '[ssh_connection]', 'pipelining = True', `ssh_args = ${sshArgs}`, `control_path_dir = ${dir}/cp`,
  ];
  writeFileSync(join(dir, 'ansible.cfg'), `${cfg.join('\n')}\n`);
  const tasks = Array.from({ length: M }, (_, i) => `    - name: t${i + 1}\n      ansible.builtin.shell: mkdir -p {{ d }}; echo t${i + 1} >> {{ d }}/log; sleep ${SLEEP}; touch {{ d }}/t${i + 1}\n      args:\n        creates: "{{ d }}/t${i + 1}"`);
  writeFileSync(join(dir, 'play.yml'), `- hosts: all\n  gather_facts: false\n  strategy: free\n  tasks:\n${tasks.join('\n')}\n`);
  const env = { ...process.env, ANSIBLE_CONFIG: join(dir, 'ansible.cfg'), ANSIBLE_LOCAL_TEMP: join(dir, 'tmp'), ANSIBLE_HOME: join(dir, 'home') };
  try {
    return time(() => execFileSync('ansible-playbook', ['-i', join(dir, 'inventory.ini'), join(dir, 'play.yml')], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
  } finally {
    // Stop the ControlPersist masters Ansible left behind (they would keep the test namespaces alive).
    for (const sock of existsSync(join(dir, 'cp')) ? readdirSync(join(dir, 'cp')) : []) {
      spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${join(dir, 'cp', sock)}`, 'kubemix-bench'], { stdio: 'ignore' });
    }
  }
}

async function sessionVsChannel(net: TestNet, kh: string): Promise<{ session: number; channel: number }> {
  const h = net.hosts[0] as TestHost;
  const t = new SshTransport(net.connection(h), { ...DEFAULT_SSH_OPTIONS, knownHosts: await new KnownHostsFile(kh).load(), trustNewHosts: false, maxSessions: 1 });
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
  ensureAnsible();
  const net = await TestNet.create(N);
  try {
    const kh = writeKnownHosts(net);
    const per = await sessionVsChannel(net, kh);
    const km = await kubemix(net, kh);
    const an = ansible(net, kh);
    const own = M * SLEEP * 1000;
    const lines = [
      `hosts N=${N}, tasks per host M=${M}, each command sleeps ${SLEEP * 1000} ms (critical path of the commands themselves: ${own} ms; sum over all hosts: ${N * own} ms)`,
      `per command, 'true' on one host: framed session ${per.session.toFixed(1)} ms vs one exec channel each ${per.channel.toFixed(1)} ms (${(per.channel / per.session).toFixed(1)}x)`,
      `kubemix up (CLI, incl. node start, connect, journal fsyncs): ${(km / 1000).toFixed(2)} s`,
      `ansible-playbook (forks=${N}, pipelining, ControlPersist, strategy free, no facts, host key checking on): ${(an / 1000).toFixed(2)} s`,
      `ratio ansible / kubemix: ${(an / km).toFixed(1)}x`,
      `kubemix overhead over the commands' own run time: ${((km - own) / 1000).toFixed(2)} s total, ${((km - own) / M).toFixed(1)} ms per task on the critical path`,
      `ansible overhead over the commands' own run time: ${((an - own) / 1000).toFixed(2)} s total, ${((an - own) / M).toFixed(1)} ms per task on the critical path`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await net.cleanup();
  }
}

await main();
