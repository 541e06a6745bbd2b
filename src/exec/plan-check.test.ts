import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findCycle } from './plan-check.js';
import { selectTasks } from './selection.js';
import { taskInputHash } from './hash.js';
import { PLAN_API_VERSION, type Plan, type Stage, type Task } from '../plan/types.js';
import { InputError } from '../errors.js';

function task(id: string, host: string, stage: Stage, after: string[] = []): Task {
  return {
    id,
    host,
    stage,
    name: id,
    description: '',
    after,
    check: null,
    apply: { shell: 'sh', privilege: 'root', script: `echo ${id}` },
    uploads: [],
    secrets: [],
    timeoutSeconds: 10,
  };
}

const plan = {
  apiVersion: PLAN_API_VERSION,
  kind: 'Plan',
  hash: '',
  hosts: [{ name: 'a' }, { name: 'b' }],
  artifacts: [],
  tasks: [
    task('f-a', 'a', 'task-gather-facts'),
    task('f-b', 'b', 'task-gather-facts'),
    task('d-a', 'a', 'task-deploy-cluster', ['f-a']),
    task('p-b', 'b', 'task-post-deployment', ['d-a']),
  ],
} as unknown as Plan;

describe('plan rules and selection', () => {
  it('prints a dependency cycle whole', () => {
    assert.deepEqual(
      findCycle({
        tasks: [
          task('x', 'a', 'task-gather-facts', ['z']),
          task('y', 'a', 'task-gather-facts', ['x']),
          task('z', 'a', 'task-gather-facts', ['y']),
        ],
      }),
      ['x', 'z', 'y', 'x'],
    );
  });

  it('a 100 000-deep chain and one closed into a cycle: answered, not a stack overflow (issue #31)', () => {
    const depth = 100_000;
    const chain = Array.from({ length: depth }, (_, i) =>
      task(`t${i}`, 'a', 'task-gather-facts', i === 0 ? [] : [`t${i - 1}`]),
    );
    assert.equal(findCycle({ tasks: chain }), undefined);
    const closed = [{ ...chain[0]!, after: [`t${depth - 1}`] }, ...chain.slice(1)];
    assert.equal(findCycle({ tasks: closed })?.length, depth + 1);
  });

  it('selects by stage, host and --from', () => {
    const ids = (o: Parameters<typeof selectTasks>[1]): string[] => selectTasks(plan, o).tasks.map((t) => t.id);
    assert.deepEqual(ids({ stopAfter: 'task-gather-facts' }), ['f-a', 'f-b']);
    assert.deepEqual(ids({ stopBefore: 'task-post-deployment' }), ['f-a', 'f-b', 'd-a']);
    assert.deepEqual(ids({ only: ['b'] }), ['f-b', 'p-b']);
    assert.deepEqual(ids({ from: 'd-a' }), ['d-a', 'p-b']);
    assert.deepEqual([...selectTasks(plan, { from: 'd-a' }).forced], ['d-a', 'p-b']);
    assert.throws(() => selectTasks(plan, { only: ['nope'] }), InputError);
    assert.throws(() => selectTasks(plan, { from: 'nope' }), InputError);
  });

  it('input hash follows commands, uploads and secret names, not descriptions', () => {
    const t = task('x', 'a', 'task-gather-facts');
    const none = new Map();
    assert.equal(taskInputHash(t, none), taskInputHash({ ...t, description: 'other', timeoutSeconds: 99 }, none));
    assert.notEqual(taskInputHash(t, none), taskInputHash({ ...t, apply: { ...t.apply, script: 'echo y' } }, none));
    assert.notEqual(taskInputHash(t, none), taskInputHash({ ...t, secrets: ['s'] }, none));
  });

  it('input hash follows the digests of user-given secret values; none given hashes as before', () => {
    const t = task('x', 'a', 'task-gather-facts');
    const none = new Map();
    const digest = (d: string) => taskInputHash(t, none, none, { 'url-userinfo-proxy-http': d });
    assert.equal(taskInputHash(t, none, none, {}), taskInputHash(t, none));
    assert.notEqual(digest('a'), digest('b'));
    assert.notEqual(digest('a'), taskInputHash(t, none));
  });
});
