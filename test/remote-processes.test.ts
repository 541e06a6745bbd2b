// How many processes a task costs the host, counted (not timed): strace
// follows a session's driver on a real sshd test host while one task runs and
// counts the processes it creates (fork/clone) and the programs it starts
// (execve). Every process is CPU on the host, and the hosts' CPU per task is
// what the executor's critical path waits for (docs/scale.md, "Executor").
// A guard: more processes per task fail here, with the counts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { writeKnownHosts } from './harness/fixture.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';
import type { ExecRequest } from '../src/transport/types.js';

const skip = harnessAvailable() ?? (existsSync('/usr/bin/strace') ? undefined : 'strace is not installed');

interface Counts {
  readonly processes: number;
  readonly programs: readonly string[];
}

/** Runs `work` while strace follows `pid` and its new children; counts what they created. */
async function counted(pid: number, file: string, work: () => Promise<unknown>): Promise<Counts> {
  const strace = spawn('strace', ['-f', '-e', 'trace=execve,clone,clone3,fork,vfork', '-o', file, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => strace.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let said = '';
    strace.stderr.on('data', (c: Buffer) => {
      said += c.toString();
      if (/attached/.test(said)) resolve();
    });
    strace.once('close', () => reject(new Error(`strace did not attach: ${said}`)));
  });
  await work();
  strace.kill('SIGINT');
  await exited;
  const lines = readFileSync(file, 'utf8').split('\n');
  const processes = lines.filter((l) => /^\d+\s+(clone3?|v?fork)\(/.test(l) && !l.includes('CLONE_THREAD')).length;
  return { processes, programs: programsStarted(lines) };
}

/**
 * The programs execve started (successful calls: a shell tries each PATH
 * directory in turn), by name; strace -f splits a call that another process
 * interrupts into "<unfinished ...>" and "<... execve resumed>".
 */
function programsStarted(lines: readonly string[]): string[] {
  const pending = new Map<string, string>();
  const started: string[] = [];
  for (const line of lines) {
    const call = /^(\d+)\s+execve\("(?:[^"]*\/)?([^"/]+)"(.*)$/.exec(line);
    if (call) {
      if (call[3]!.includes('<unfinished')) pending.set(call[1]!, call[2]!);
      else if (/ = 0$/.test(call[3]!)) started.push(call[2]!);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. execve resumed>.* = 0$/.exec(line);
    const name = resumed ? pending.get(resumed[1]!) : undefined;
    if (name !== undefined) started.push(name);
  }
  return started;
}

describe('processes a task starts on the host', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  let t: SshTransport;
  let driver: number;
  before(async () => {
    net = await TestNet.create(1);
    t = new SshTransport(net.connection(net.hosts[0]!), {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts: await new KnownHostsFile(writeKnownHosts(net)).load(),
      trustNewHosts: false,
      maxSessions: 1,
    });
    // A command's parent is the session's driver (the root login runs commands without sudo).
    driver = Number((await t.exec(sh('echo $PPID'))).stdout);
  });
  after(async () => {
    await t?.close();
    await net?.cleanup();
  });

  const sh = (script: string): ExecRequest => ({ shell: 'sh', privilege: 'root', script, timeoutMs: 10_000 });
  const trace = (name: string) => join(net.root, `${name}.strace`);

  it('a no-op task (its check passes): one process, sh', async () => {
    const c = await counted(driver, trace('noop'), async () => {
      const r = await t.converge(sh('test -d /'), sh(': apply'));
      assert.equal(r.checkPassed, true);
    });
    assert.deepEqual(c, { processes: 1, programs: ['sh'] });
  });

  it('an applied task (its check fails): two processes, the check and the apply', async () => {
    const c = await counted(driver, trace('applied'), async () => {
      const r = await t.converge(sh('test -f /nonexistent-kubemix'), sh(': apply'));
      assert.deepEqual([r.checkPassed, r.code], [false, 0]);
    });
    assert.deepEqual(c, { processes: 2, programs: ['sh', 'sh'] });
  });

  it('one command with stdin: its sh and one head for the stdin bytes', async () => {
    const c = await counted(driver, trace('stdin'), () => t.exec({ ...sh('read -r x'), stdin: Buffer.from('x\n') }));
    assert.deepEqual(c, { processes: 2, programs: ['head', 'sh'] });
  });
});
