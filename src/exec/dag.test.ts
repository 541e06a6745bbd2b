import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runDag, type DagNode, type Outcome } from './dag.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function nodes(spec: Record<string, [string, string[]]>): DagNode[] {
  return Object.entries(spec).map(([id, [host, after]]) => ({ id, host, after }));
}

describe('runDag', () => {
  it('runs dependencies first and hosts independently (no lockstep)', { timeout: 5000 }, async () => {
    const log: string[] = [];
    const plan = nodes({ a1: ['a', []], a2: ['a', ['a1']], b1: ['b', []], b2: ['b', ['b1']], c: ['a', ['a2', 'b2']] });
    let b2Done: () => void = () => undefined;
    const b2Finished = new Promise<void>((r) => (b2Done = r));
    const out = await runDag(
      plan,
      { concurrency: 1, signal: new AbortController().signal },
      {
        work: async (n) => {
          log.push(`start ${n.id}`);
          // a1 can only finish once host b has run its whole chain: lockstep would deadlock here.
          if (n.id === 'a1') await b2Finished;
          await sleep(1);
          log.push(`end ${n.id}`);
          if (n.id === 'b2') b2Done();
          return 'done';
        },
        blocked: () => assert.fail('nothing is blocked'),
      },
    );
    assert.deepEqual([...out.values()].sort(), ['done', 'done', 'done', 'done', 'done']);
    assert.ok(log.indexOf('end b2') < log.indexOf('end a1'), 'host b finished its chain while a1 was still running');
    assert.ok(log.indexOf('start c') > log.indexOf('end a2') && log.indexOf('start c') > log.indexOf('end b2'));
  });

  // Issue #31: each push re-sorted a host's ready list (a 20 000-task plan took 41 s), and a failure at the
  // head of a 10 000-deep chain blocked its dependents by recursion. Both are bounded generously: the
  // machine is shared; the put-back defects take tens of seconds or throw.
  it(
    '20 000 ready tasks on one host run in plan order in seconds, not a re-sort per push',
    { timeout: 60_000 },
    async () => {
      const count = 20_000;
      const plan: DagNode[] = Array.from({ length: count }, (_, i) => ({ id: `t${i}`, host: 'a', after: [] }));
      const order: string[] = [];
      const started = performance.now();
      const out = await runDag(
        plan,
        { concurrency: 1, signal: new AbortController().signal },
        { work: (n) => (order.push(n.id), Promise.resolve('done')), blocked: () => assert.fail('nothing is blocked') },
      );
      assert.equal(out.size, count);
      assert.deepEqual(
        order,
        plan.map((n) => n.id),
      );
      assert.ok(performance.now() - started < 10_000, `took ${Math.round(performance.now() - started)} ms`);
    },
  );

  it('a failure at the head of a 100 000-deep chain blocks every dependent, without recursion', async () => {
    const depth = 100_000;
    const plan: DagNode[] = Array.from({ length: depth }, (_, i) => ({
      id: `t${i}`,
      host: 'a',
      after: i === 0 ? [] : [`t${i - 1}`],
    }));
    let blocked = 0;
    const out = await runDag(
      plan,
      { concurrency: 1, signal: new AbortController().signal },
      { work: () => Promise.resolve('failed'), blocked: () => (blocked += 1) },
    );
    assert.equal(out.get('t0'), 'failed');
    assert.equal(blocked, depth - 1);
    assert.equal(out.get(`t${depth - 1}`), 'skipped');
  });

  it('respects per-host concurrency', async () => {
    let now = 0;
    let peak = 0;
    const plan = Array.from({ length: 8 }, (_, i) => ({ id: `t${i}`, host: 'h', after: [] }));
    await runDag(
      plan,
      { concurrency: 3, signal: new AbortController().signal },
      {
        work: async () => {
          peak = Math.max(peak, ++now);
          await sleep(5);
          now -= 1;
          return 'done';
        },
        blocked: () => undefined,
      },
    );
    assert.equal(peak, 3);
  });

  it('skips dependents of a failure and lets other branches finish', async () => {
    const blocked: string[] = [];
    const plan = nodes({ x: ['a', []], y: ['a', ['x']], z: ['a', ['y']], w: ['b', []] });
    const out = await runDag(
      plan,
      { concurrency: 2, signal: new AbortController().signal },
      {
        work: async (n): Promise<Outcome> => (n.id === 'x' ? 'failed' : 'done'),
        blocked: (n, cause) => blocked.push(`${n.id}<-${cause}`),
      },
    );
    assert.deepEqual(Object.fromEntries(out), { x: 'failed', y: 'skipped', z: 'skipped', w: 'done' });
    assert.deepEqual(blocked, ['y<-x', 'z<-x']);
  });

  it('on abort starts nothing new, lets running work finish, cancels the rest', async () => {
    const ac = new AbortController();
    const plan = nodes({ a: ['h', []], b: ['h', ['a']], c: ['g', []] });
    const out = await runDag(
      plan,
      { concurrency: 1, signal: ac.signal },
      {
        work: async (n) => {
          if (n.id === 'a') ac.abort();
          await sleep(10);
          return 'done';
        },
        blocked: () => undefined,
      },
    );
    assert.equal(out.get('a'), 'done');
    assert.equal(out.get('b'), 'cancelled');
  });
});
