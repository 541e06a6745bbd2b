import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan, countedTask, writePlanDir } from './harness/plan-builder.js';
import { newStateDir } from './harness/fixture.js';

const skip = harnessAvailable();

function io(env: Record<string, string> = {}): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: { KUBEMIX_RETRY_ATTEMPTS: '1', ...env },
    cwd: process.cwd(),
    isTty: false,
    signal: new AbortController().signal,
  };
}

describe('kubemix up / logs (CLI, in process)', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  let planDir: string;
  before(async () => {
    net = await TestNet.create(1);
    const h = net.hosts[0]!;
    planDir = join(net.root, 'plan');
    await writePlanDir(
      planDir,
      buildPlan(
        [net.connection(h)],
        [countedTask(h.name, h.dir, 'one', { stage: 'task-gather-facts' }), countedTask(h.name, h.dir, 'two')],
      ),
    );
  });
  after(async () => net?.cleanup());

  it('--downloads must name a directory: exit 2 before any host is touched', async () => {
    const c = io();
    assert.equal(
      await run(
        ['up', '--plan', planDir, '--state-dir', newStateDir(net), '--downloads', join(net.root, 'no-such-dir')],
        c,
      ),
      2,
    );
    assert.match(c.err.join(''), /--downloads .*no-such-dir: not a directory \[flags\.downloads\]/);
    assert.doesNotMatch(c.err.join(''), /connected/);
  });

  it('exit 2 without --plan, and for a plan whose hash does not match', async () => {
    assert.equal(await run(['up'], io()), 2);
    const bad = join(net.root, 'bad');
    const plan = JSON.parse(readFileSync(join(planDir, 'plan.json'), 'utf8')) as { cluster: { name: string } };
    plan.cluster.name = 'edited';
    await writePlanDir(bad, { plan: plan as never, contents: new Map() });
    const c = io();
    assert.equal(await run(['up', '--plan', bad, '--state-dir', newStateDir(net)], c), 2);
    assert.match(c.err.join(''), /plan\.hash-mismatch/);
  });

  it('first contact: exit 3 naming --trust-new-hosts; with it, TOFU; then --check, --stop-after, --json', async () => {
    const state = newStateDir(net);
    const refused = io();
    assert.equal(await run(['up', '--plan', planDir, '--state-dir', state], refused), 3);
    assert.match(refused.err.join(''), /unknown host key for host-1 .*SHA256:/);
    assert.match(refused.err.join(''), /--trust-new-hosts/);
    const check = io();
    assert.equal(
      await run(['up', '--plan', planDir, '--state-dir', state, '--trust-new-hosts', '--check'], check),
      1,
      'changes pending: exit 1',
    );
    assert.match(check.out.join(''), /host-1: 2 task\(s\) would change/);
    const facts = io();
    assert.equal(
      await run(['up', '--plan', planDir, '--state-dir', state, '--stop-after', 'task-gather-facts'], facts),
      0,
      facts.err.join(''),
    );
    assert.deepEqual(readFileSync(join(net.hosts[0]!.dir, 'apply.log'), 'utf8').trim().split('\n'), ['one']);
    const json = io();
    assert.equal(await run(['--json', 'up', '--plan', planDir, '--state-dir', state], json), 0, json.err.join(''));
    const events = json.out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; state?: string });
    assert.equal(events[0]?.type, 'run:start');
    assert.equal(events.at(-1)?.type, 'run:end');
    assert.deepEqual(
      events.filter((e) => e.type === 'task' && e.state !== 'running').map((e) => e.state),
      ['skipped', 'done'],
    );
    const logs = io();
    assert.equal(await run(['logs', '--state-dir', state, 'host-1'], logs), 0);
    assert.match(logs.out.join(''), /task-prepare-cluster\/host-1\/two done/);
  });
});
