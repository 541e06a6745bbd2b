import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan, countedTask, taskId, type TaskInput } from './harness/plan-builder.js';
import { lines, newStateDir, run, writeKnownHosts } from './harness/fixture.js';
import { HostError, InputError, isKubemixError } from '../src/errors.js';
import { acquireLock } from '../src/exec/lock.js';
import { summary } from '../src/cli/render/plain.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';
import { ShellSession } from '../src/transport/shell-session.js';
import type { HostTransport } from '../src/transport/types.js';

const skip = harnessAvailable();

describe('executor on real sshd hosts', { skip, timeout: 120_000 }, () => {
  let net: TestNet;
  let kh: string;
  before(async () => {
    net = await TestNet.create(3);
    kh = writeKnownHosts(net);
  });
  after(async () => net?.cleanup());

  function chainPlan(
    prefix: string,
    applyOverride: Partial<Record<string, string>> = {},
  ): ReturnType<typeof buildPlan> {
    const tasks: TaskInput[] = [];
    for (const h of net.hosts) {
      const dir = join(h.dir, prefix);
      tasks.push({
        host: h.name,
        name: 'mkdir',
        stage: 'task-prepare-environment',
        check: `test -d ${dir}`,
        apply: `mkdir -p ${dir}`,
      });
      for (let i = 1; i <= 3; i++) {
        const t = countedTask(h.name, dir, `step${i}`, {
          after: [
            taskId({
              host: h.name,
              name: i === 1 ? 'mkdir' : `step${i - 1}`,
              stage: i === 1 ? 'task-prepare-environment' : undefined,
            }),
          ],
        });
        tasks.push(
          applyOverride[`${h.name}/step${i}`] === undefined
            ? t
            : { ...t, apply: `${t.apply}; ${applyOverride[`${h.name}/step${i}`]}` },
        );
      }
    }
    const first = net.hosts[0]!.name;
    tasks.push(
      countedTask(first, join(net.hosts[0]!.dir, prefix), 'joined', {
        stage: 'task-deploy-cluster',
        after: net.hosts.map((h) => taskId({ host: h.name, name: 'step3' })),
      }),
    );
    return buildPlan(
      net.hosts.map((h) => net.connection(h)),
      tasks,
    );
  }

  it('applies a DAG across hosts, then resumes with nothing to do; --check sees no change', async () => {
    const state = newStateDir(net);
    const first = await run(chainPlan('dag'), state, kh);
    assert.equal(first.error, undefined, String(first.error));
    assert.equal(first.result?.counts.done, 13);
    assert.equal(first.result?.changes, 13, 'every task applied');
    assert.match(summary(first.events.ofType('run:end')[0]!), /^apply ok in [\d.]+s: 13 done; 13 changed$/);
    // Every done task says how long its scripts ran on the host, never longer than kubemix saw it take.
    const done = first.events.ofType('task').filter((e) => e.state === 'done');
    assert.ok(
      done.every((e) => e.hostMs !== undefined && e.elapsedMs !== undefined && e.hostMs <= e.elapsedMs),
      JSON.stringify(done.map((e) => [e.id, e.hostMs, e.elapsedMs])),
    );
    // And where kubemix's own time went: the parts add up to no more than it saw, the round trips
    // hold the scripts' time (1 ms for the two clocks' rounding), each host's first task connected.
    for (const e of done) {
      const p = e.phasesMs;
      assert.ok(p !== undefined, e.id);
      const sum = Object.values(p).reduce((a, ms) => a + ms, 0);
      assert.ok(sum <= (e.elapsedMs ?? 0) && p.commands + 1 >= (e.hostMs ?? 0), `${e.id}: ${JSON.stringify(e)}`);
    }
    for (const h of net.hosts)
      assert.ok(
        done.some((e) => e.host === h.name && (e.phasesMs?.connect ?? 0) > 0),
        `${h.name}: no task counted its connection`,
      );
    assert.deepEqual(lines(join(net.hosts[0]!.dir, 'dag', 'apply.log')), ['step1', 'step2', 'step3', 'joined']);
    const journal = JSON.parse(readFileSync(join(state, 'journal.json'), 'utf8')) as {
      tasks: Record<string, { state: string }>;
    };
    assert.ok(Object.values(journal.tasks).every((t) => t.state === 'done'));
    assert.equal(statSync(state).mode & 0o777, 0o700);
    const second = await run(chainPlan('dag'), state, kh);
    assert.equal(second.result?.counts.skipped, 13);
    assert.match(summary(second.events.ofType('run:end')[0]!), /: 13 skipped; 0 changed$/);
    assert.equal(second.events.ofType('host:connected').length, 0, 'nothing to do: no connection opened');
    assert.equal(lines(join(net.hosts[0]!.dir, 'dag', 'apply.log')).length, 4);
    const check = await run(chainPlan('dag'), state, kh, { check: true });
    assert.equal(check.result?.changes, 0);
  });

  it('one command per task on the host: check and apply folded; a second run only checks', async () => {
    const state = newStateDir(net);
    const knownHosts = await new KnownHostsFile(kh).load();
    const counts = { exec: 0, converge: 0, frames: 0 };
    const transportFor = (host: string): HostTransport => {
      const conn = net.connection(net.hosts.find((h) => h.name === host)!);
      const t = new SshTransport(conn, { ...DEFAULT_SSH_OPTIONS, knownHosts, trustNewHosts: false, maxSessions: 4 });
      const exec = t.exec.bind(t);
      t.exec = (r) => (counts.exec++, exec(r));
      const converge = t.converge.bind(t);
      t.converge = (c, a) => (counts.converge++, converge(c, a));
      return t;
    };
    const sessionRun = ShellSession.prototype.run;
    ShellSession.prototype.run = function (...args) {
      counts.frames++;
      return sessionRun.apply(this, args);
    };
    try {
      const first = await run(chainPlan('fold'), state, kh, { transportFor });
      assert.equal(first.result?.changes, 13, String(first.error));
      assert.deepEqual(counts, { exec: 0, converge: 13, frames: 13 }, 'one framed command for each of the 13 tasks');
      rmSync(join(state, 'journal.json'));
      const second = await run(chainPlan('fold'), state, kh, { transportFor });
      assert.equal(second.result?.changes, 0, 'every check passed, nothing applied again');
      assert.deepEqual(counts, { exec: 0, converge: 26, frames: 26 });
    } finally {
      ShellSession.prototype.run = sessionRun;
    }
    assert.equal(lines(join(net.hosts[0]!.dir, 'fold', 'apply.log')).length, 4);
  });

  it('re-runs only the tasks whose inputs changed between runs', async () => {
    const state = newStateDir(net);
    await run(chainPlan('change'), state, kh);
    const h2 = net.hosts[1]!;
    const changed = chainPlan('change', { [`${h2.name}/step2`]: 'true' });
    const check = await run(changed, state, kh, { check: true });
    assert.equal(check.result?.changes, 0, 'the marker exists, so even the changed task checks clean');
    const again = await run(changed, state, kh);
    const ran = again.events
      .ofType('task')
      .filter((e) => e.state === 'done')
      .map((e) => e.id);
    assert.deepEqual(ran, [taskId({ host: h2.name, name: 'step2' })]);
    assert.equal(again.result?.counts.skipped, 12);
  });

  it('refuses a second concurrent run and takes over a stale lock', async () => {
    const state = newStateDir(net);
    const held = await acquireLock(state);
    const refused = await run(chainPlan('lock'), state, kh);
    assert.ok(refused.error instanceof InputError && refused.error.code === 'state.locked', String(refused.error));
    await held.release();
  });

  it('a host that stays down: clear error naming host and task, other hosts finish, resumable', async () => {
    const state = newStateDir(net);
    const down = net.hosts[2]!;
    await net.stopSshd(down);
    try {
      const r = await run(chainPlan('down'), state, kh, { retry: { attempts: 2, baseDelayMs: 100, maxDelayMs: 200 } });
      assert.ok(r.error instanceof HostError && r.error.exit === 3, String(r.error));
      const failed = r.events.ofType('task').filter((e) => e.state === 'failed');
      assert.match(failed[0]?.error ?? '', new RegExp(`${down.name}.*cannot connect|${down.name}: .*mkdir`));
      assert.match(
        (r.error as Error).message,
        new RegExp(
          `task-prepare-environment/${down.name}/mkdir: ${down.name}: cannot connect .*gave up after 2 attempts`,
        ),
      );
      for (const h of net.hosts.slice(0, 2))
        assert.deepEqual(lines(join(h.dir, 'down', 'apply.log')), ['step1', 'step2', 'step3']);
    } finally {
      await net.startSshd(down);
    }
    const resumed = await run(chainPlan('down'), state, kh);
    assert.equal(resumed.error, undefined, String(resumed.error));
    assert.deepEqual(lines(join(down.dir, 'down', 'apply.log')), ['step1', 'step2', 'step3']);
    assert.equal(lines(join(net.hosts[0]!.dir, 'down', 'apply.log')).length, 4, 'done tasks were not re-applied');
  });

  it('refuses a changed host key, naming the host and both fingerprints', async () => {
    const h = net.hosts[1]!;
    const state = newStateDir(net);
    await net.stopSshd(h);
    net.newHostKey(h);
    await net.startSshd(h);
    try {
      const r = await run(chainPlan('hostkey'), state, kh, { trustNewHosts: true });
      assert.ok(isKubemixError(r.error) && r.error.exit === 3);
      const message = (r.error as Error).message;
      assert.match(
        message,
        new RegExp(
          `host key of ${h.name} \\(${h.address.replace(/\./g, '\\.')}\\) CHANGED: known SHA256:\\S+, offered SHA256:\\S+`,
        ),
      );
      assert.equal(lines(join(h.dir, 'hostkey', 'apply.log')).length, 0);
    } finally {
      net.newHostKey(h);
      kh = writeKnownHosts(net);
      await net.stopSshd(h);
      await net.startSshd(h);
    }
  });
});
