import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isKubemixError } from '../errors.js';
import { readJournal } from './journal.js';
import { chosenStateDir, forgetDeployment, resolveStateDir, statePaths } from './state-dir.js';

const where = { cwd: '/work/site', cluster: 'c1', beside: '/work/site/specs' };

test('state dir: --state-dir > KUBEMIX_STATE_DIR > .kubemix/<cluster> beside the spec, relative to the working directory', () => {
  assert.equal(resolveStateDir({ ...where, flag: 'st', env: { KUBEMIX_STATE_DIR: '/env' } }), '/work/site/st');
  assert.equal(resolveStateDir({ ...where, flag: undefined, env: { KUBEMIX_STATE_DIR: 'env' } }), '/work/site/env');
  assert.equal(resolveStateDir({ ...where, flag: undefined, env: {} }), '/work/site/specs/.kubemix/c1');
});

test('state dir: an empty --state-dir is refused naming the flag, whatever the environment says', () => {
  for (const env of [{}, { KUBEMIX_STATE_DIR: '/env' }]) {
    for (const flag of ['', '  ']) {
      assert.throws(
        () => resolveStateDir({ ...where, flag, env }),
        (e: unknown) => isKubemixError(e) && e.code === 'flags.state-dir' && e.path === '--state-dir' && e.exit === 2,
      );
      assert.throws(() => chosenStateDir({ cwd: where.cwd, flag, env }), /--state-dir is empty/);
    }
  }
});

test('state dir: an empty KUBEMIX_STATE_DIR counts as unset', () => {
  assert.equal(
    resolveStateDir({ ...where, flag: undefined, env: { KUBEMIX_STATE_DIR: '' } }),
    '/work/site/specs/.kubemix/c1',
  );
  assert.equal(chosenStateDir({ cwd: where.cwd, flag: undefined, env: { KUBEMIX_STATE_DIR: '' } }), undefined);
});

test('journal: absent is undefined, unreadable is a typed error naming the file; forgetting keeps secrets', async () => {
  const root = await mkdtemp(join(tmpdir(), 'kubemix-state-'));
  try {
    const paths = statePaths(root);
    assert.equal(await readJournal(root), undefined);
    await writeFile(paths.journal, '{ not json');
    await assert.rejects(
      readJournal(root),
      (e: unknown) => isKubemixError(e) && e.code === 'state.journal' && e.path === paths.journal,
    );
    await writeFile(paths.secrets, '{}');
    await mkdir(join(paths.reset, 'logs'), { recursive: true });
    await forgetDeployment(root);
    assert.deepEqual(await readdir(root), ['secrets.json']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
