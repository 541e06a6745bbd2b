// A task that reboots its host (Task.reboots, e.g. win-reboot after the
// Containers feature): the executor waits, through the host being unreachable,
// until the task's check passes again, and only then runs the next task.
// The "reboot" is the test host's link going down and a marker appearing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan, taskId } from './harness/plan-builder.js';
import { lines, newStateDir, run, writeKnownHosts } from './harness/fixture.js';
import { checkPlanRules } from '../src/exec/plan-check.js';

const skip = harnessAvailable();

function plan(net: TestNet, dir: string, timeoutSeconds: number): ReturnType<typeof buildPlan> {
  const h = net.hosts[0]!;
  return buildPlan(
    [net.connection(h)],
    [
      // Like win-reboot: the check fails until the reboot is over.
      {
        host: h.name,
        name: 'reboot',
        check: `test -f ${dir}/rebooted`,
        apply: `mkdir -p ${dir} && touch ${dir}/pending`,
        reboots: true,
        timeoutSeconds,
      },
      {
        host: h.name,
        name: 'next',
        after: [taskId({ host: h.name, name: 'reboot' })],
        check: null,
        apply: `test -f ${dir}/rebooted && echo next >> ${dir}/log`,
      },
    ],
  );
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a task that reboots its host', { skip, timeout: 90_000 }, () => {
  let net: TestNet;
  let kh: string;
  before(async () => {
    net = await TestNet.create(1);
    kh = writeKnownHosts(net);
  });
  after(async () => net?.cleanup());

  it('waits through the host being unreachable until its check passes, then runs the next task', async () => {
    const h = net.hosts[0]!;
    const dir = join(h.dir, 'reboot-ok');
    const running = run(plan(net, dir, 60), newStateDir(net), kh);
    // The "reboot": like shutdown.exe /r /t 10, the host stays up a while after
    // the apply returned, then drops off the network for 4 s and comes back rebooted.
    await until(() => existsSync(join(dir, 'pending')), 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    net.link(h, 'down');
    await new Promise((r) => setTimeout(r, 4000));
    writeFileSync(join(dir, 'rebooted'), '');
    net.link(h, 'up');
    const out = await running;
    assert.equal(out.error, undefined, String(out.error));
    assert.equal(out.result?.counts.done, 2);
    assert.deepEqual(lines(join(dir, 'log')), ['next']);
    assert.ok(out.events.ofType('host:connecting').length >= 2, 'reconnected after the reboot');
  });

  it('fails, naming the host and the time limit, when the host never comes back; the next task does not run', async () => {
    const h = net.hosts[0]!;
    const dir = join(h.dir, 'reboot-never');
    const out = await run(plan(net, dir, 3), newStateDir(net), kh);
    assert.ok(out.error !== undefined, 'the run fails');
    const failed = out.events.ofType('task').find((e) => e.state === 'failed');
    assert.match(failed?.error ?? '', /did not come back from its reboot within 3 s/);
    assert.deepEqual(lines(join(dir, 'log')), []);
  });

  it('a plan with a rebooting task and no check is refused', () => {
    const h = net.hosts[0]!;
    const built = buildPlan(
      [net.connection(h)],
      [{ host: h.name, name: 'reboot', check: null, apply: 'true', reboots: true }],
    );
    assert.match(
      checkPlanRules(built.plan)
        .map((d) => d.message)
        .join('\n'),
      /reboots its host needs a check/,
    );
  });
});
