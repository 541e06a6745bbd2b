// The session's watchdog on real sshd test hosts: each part of a folded check
// and apply is killed at its own limit (measured on the host, from the
// command's start to the TERM it receives), the command's whole process group
// goes (background children, even one that ignores TERM), the session runs the
// next command, and the executor reports a typed timeout naming the task.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan } from './harness/plan-builder.js';
import { newStateDir, run, writeKnownHosts } from './harness/fixture.js';
import { isKubemixError } from '../src/errors.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';
import { ANSWER_SECONDS } from '../src/transport/sh-driver.js';

const skip = harnessAvailable();

/** Whether `pid` runs (a zombie waiting for its reaper does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** Whether `pid` is still running after up to a second (a SIGKILL takes effect asynchronously). */
async function stillRuns(pid: number): Promise<boolean> {
  for (let i = 0; i < 20 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return alive(pid);
}

describe('session watchdog on real sshd test hosts', { skip, timeout: 90_000 }, () => {
  let net: TestNet;
  let t: SshTransport;
  before(async () => {
    net = await TestNet.create(1);
    const knownHosts = await new KnownHostsFile(writeKnownHosts(net)).load();
    // One session: every command below runs on the same driver and watchdog.
    t = new SshTransport(net.connection(net.hosts[0]!), {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts,
      trustNewHosts: false,
      maxSessions: 1,
    });
  });
  after(async () => {
    await t?.close();
    await net?.cleanup();
  });

  const sh = (script: string, timeoutMs: number) => ({ shell: 'sh', privilege: 'root', script, timeoutMs }) as const;

  /** A script that records when it started and when its TERM came (ms since the epoch), then sleeps. */
  function timed(name: string): { script: string; elapsed: () => number } {
    const dir = net.hosts[0]!.dir;
    const start = join(dir, `${name}.start`);
    const term = join(dir, `${name}.term`);
    return {
      script: `trap 'date +%s%3N > ${term}; exit 143' TERM\ndate +%s%3N > ${start}\nsleep 30 & wait`,
      elapsed: () => Number(readFileSync(term, 'utf8')) - Number(readFileSync(start, 'utf8')),
    };
  }

  it('kills a check at its own limit and does not apply', async () => {
    const check = timed('check');
    const r = await t.converge(sh(check.script, 1000), sh('echo applied', 3000));
    assert.deepEqual([r.timedOut, r.timedOutPart, r.checkPassed, r.code, r.stdout], [true, 'check', false, 124, '']);
    const ms = check.elapsed();
    // From when `date` ran (a little after the start) to the TERM; one budget for check + apply would give 4 s.
    assert.ok(ms >= 850 && ms < 2500, `the check got its TERM after ${ms} ms, its limit is 1000`);
    assert.equal((await t.exec(sh('echo next', 5000))).stdout, 'next\n', 'the session runs the next command');
  });

  it('kills an apply at its own limit, however quick the check was', async () => {
    const apply = timed('apply');
    const r = await t.converge(sh('exit 1', 3000), sh(apply.script, 1000));
    assert.deepEqual([r.timedOut, r.timedOutPart, r.checkPassed, r.code], [true, 'apply', false, 124]);
    const ms = apply.elapsed();
    assert.ok(ms >= 850 && ms < 2500, `the apply got its TERM after ${ms} ms, its limit is 1000`);
    assert.equal((await t.exec(sh('echo next', 5000))).stdout, 'next\n');
  });

  it("kills the command's whole process group: nothing it forked still runs", async () => {
    const dir = net.hosts[0]!.dir;
    const script = [
      `sleep 300 & echo $! > ${dir}/bg.pid`,
      // Ignores TERM (an ignored signal stays ignored across exec): only SIGKILL to the group ends it.
      `sh -c 'trap "" TERM; exec sleep 300' & echo $! > ${dir}/deaf.pid`,
      'sleep 300',
    ].join('\n');
    const r = await t.converge(sh('exit 1', 3000), sh(script, 1000));
    assert.equal(r.timedOutPart, 'apply');
    for (const name of ['bg.pid', 'deaf.pid']) {
      const pid = Number(readFileSync(join(dir, name), 'utf8'));
      assert.ok(pid > 1 && !(await stillRuns(pid)), `${name} ${pid} still runs after the timeout`);
    }
    assert.equal((await t.exec(sh('echo next', 5000))).stdout, 'next\n');
  });

  it('leaves what a command left running alone when the command ended in time', async () => {
    const dir = net.hosts[0]!.dir;
    const r = await t.exec(sh(`sleep 300 >/dev/null 2>&1 & echo $! > ${dir}/kept.pid`, 5000));
    assert.equal(r.code, 0);
    const pid = Number(readFileSync(join(dir, 'kept.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(alive(pid), 'a daemon a command started on purpose survives (as under timeout(1))');
    process.kill(pid, 'SIGKILL');
  });

  it('ends a session whose watchdog is gone instead of running a command unbounded; the next one works', async () => {
    const driver = Number((await t.exec(sh('echo $PPID', 5000))).stdout);
    const children = readFileSync(`/proc/${driver}/task/${driver}/children`, 'utf8').trim().split(' ');
    const watchdog = children.map(Number).find((pid) => /kubemix-watchdog/.test(cmdline(pid)));
    assert.ok(watchdog !== undefined, `no watchdog among the driver's children ${children.join(' ')}`);
    process.kill(watchdog, 'SIGKILL');
    // Gone means reaped by the driver: until then `kill -0` still finds it (a signal is only queued when
    // kill returns, and a dying or zombie watchdog would answer no command's end — the driver then waits
    // for its answer as long as the client waits for the command).
    for (let i = 0; i < 100 && existsSync(`/proc/${watchdog}`); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!existsSync(`/proc/${watchdog}`), 'the driver reaped its watchdog');
    await assert.rejects(t.exec(sh('echo unbounded', 5000)), (e: Error & { transient?: boolean }) => {
      assert.match(e.message, /session closed/);
      assert.equal(e.transient, true, 'the executor retries it');
      return true;
    });
    assert.equal((await t.exec(sh('echo next', 5000))).stdout, 'next\n', 'a new session, with its own watchdog');
  });

  it('ends the session when its watchdog dies while a command runs, once the command is over', async () => {
    const dir = net.hosts[0]!.dir;
    const running = t.exec(sh(`echo $PPID > ${dir}/driver.pid; sleep 1; echo done`, 60_000));
    const pidFile = join(dir, 'driver.pid');
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 20));
    const driver = Number(readFileSync(pidFile, 'utf8'));
    const children = readFileSync(`/proc/${driver}/task/${driver}/children`, 'utf8').trim().split(' ');
    const watchdog = children.map(Number).find((pid) => /kubemix-watchdog/.test(cmdline(pid)));
    assert.ok(watchdog !== undefined, `no watchdog among the driver's children ${children.join(' ')}`);
    process.kill(watchdog, 'SIGKILL');
    const started = Date.now();
    // Without an answer the driver would wait as long as the client waits for the command (60 s here).
    await assert.rejects(running, (e: Error & { transient?: boolean }) => {
      assert.match(e.message, /session closed/);
      assert.equal(e.transient, true, 'the executor retries it');
      return true;
    });
    const waited = Date.now() - started;
    assert.ok(waited < (ANSWER_SECONDS + 5) * 1000, `the session ended ${waited} ms after the watchdog died`);
    assert.equal((await t.exec(sh('echo next', 5000))).stdout, 'next\n', 'a new session, with its own watchdog');
  });

  it('fails a timed-out task with an error naming the task and the part', async () => {
    const h = net.hosts[0]!;
    const built = buildPlan(
      [net.connection(h)],
      [{ host: h.name, name: 'slow', check: 'exit 1', apply: 'sleep 30', timeoutSeconds: 1 }],
    );
    const outcome = await run(built, newStateDir(net), writeKnownHosts(net));
    const error = outcome.error;
    assert.ok(isKubemixError(error), String(error));
    assert.equal(error.code, 'run.failed');
    const failed = outcome.events.ofType('run:end')[0]?.failed ?? [];
    assert.deepEqual(
      failed.map((f) => f.error),
      [`${h.name}: task-prepare-cluster/${h.name}/slow: apply timed out after 1 s`],
    );
  });
});
