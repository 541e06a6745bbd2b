import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from './journal.js';
import { acquireLock } from './lock.js';
import { InputError } from '../errors.js';

describe('journal', () => {
  it('persists every recorded state atomically and resumes from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const j = await Journal.open(dir, 'c', 'planhash');
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        j.record(`t${i}`, { state: 'done', host: 'h', inputHash: `i${i}`, attempts: 1 }),
      ),
    );
    const doc = JSON.parse(readFileSync(join(dir, 'journal.json'), 'utf8')) as { tasks: Record<string, unknown> };
    assert.equal(Object.keys(doc.tasks).length, 50, 'every awaited record is on disk');
    assert.deepEqual(readdirSync(dir), ['journal.json'], 'no temp files left');
    const again = await Journal.open(dir, 'c', 'planhash');
    assert.equal(again.isDone('t7', 'i7'), true);
    assert.equal(again.isDone('t7', 'changed'), false, 'a changed input hash is not done');
  });
});

describe('lock', () => {
  it('refuses a live holder and takes over a dead one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    const held = await acquireLock(dir);
    await assert.rejects(
      acquireLock(dir),
      (e: unknown) => e instanceof InputError && e.code === 'state.locked' && e.exit === 2,
    );
    await held.release();
    writeFileSync(
      join(dir, 'lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), startedAt: 'then' }),
    );
    const taken = await acquireLock(dir);
    assert.equal(taken.tookOverStale?.pid, 2 ** 22 + 12345);
    await taken.release();
  });
});
