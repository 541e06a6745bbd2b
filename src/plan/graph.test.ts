import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkGraph } from './graph.js';
import { shellCode } from '../util/escape/index.js';
import { sh, task } from './task.js';
import type { Stage, Task } from './types.js';

const t = (name: string, after: string[] = [], stage: Stage = 'task-deploy-cluster'): Task =>
  task({ stage, host: 'h', name, description: name, after, check: null, apply: sh(shellCode('true')) });
const id = (name: string, stage: Stage = 'task-deploy-cluster'): string => `${stage}/h/${name}`;

describe('checkGraph', () => {
  it('accepts a DAG across stages', () => {
    checkGraph([t('a', [], 'task-prepare-cluster'), t('b', [id('a', 'task-prepare-cluster')]), t('c', [id('b')])]);
  });

  it('refuses a duplicate id, an unknown dependency and one in a later stage, naming them', () => {
    assert.throws(() => checkGraph([t('a'), t('a')]), /^Error: duplicate task id task-deploy-cluster\/h\/a$/);
    assert.throws(() => checkGraph([t('a', [id('x')])]), /task-deploy-cluster\/h\/a depends on unknown task .*\/h\/x$/);
    assert.throws(
      () => checkGraph([t('a', [id('b')], 'task-prepare-cluster'), t('b')]),
      /task-prepare-cluster\/h\/a depends on task-deploy-cluster\/h\/b, which is in a later stage/,
    );
  });

  it('prints a cycle whole, from where it closes', () => {
    const tasks = [t('root', [id('a')]), t('a', [id('b')]), t('b', [id('c')]), t('c', [id('a')])];
    assert.throws(
      () => checkGraph(tasks),
      new RegExp(`^Error: task dependency cycle: ${[id('a'), id('b'), id('c'), id('a')].join(' → ')}$`),
    );
    assert.throws(() => checkGraph([t('self', [id('self')])]), /cycle: .*\/self → .*\/self$/);
  });

  it('walks a chain of 200 000 tasks without running out of stack', () => {
    const chain = Array.from({ length: 200_000 }, (_, i) => t(`n${i}`, i === 0 ? [] : [id(`n${i - 1}`)]));
    checkGraph(chain.reverse());
    chain[chain.length - 1] = t('n0', [id('n199999')]);
    assert.throws(() => checkGraph(chain), /task dependency cycle: .*\/n199999 → .*\/n199998 → /);
  });
});
