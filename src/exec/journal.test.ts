import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal, readJournal, type JournalDocument, type JournalEntry } from './journal.js';
import { acquireLock } from './lock.js';
import { InputError } from '../errors.js';

describe('journal', () => {
  const entry = (i: number): JournalEntry => ({ state: 'done', host: 'h', inputHash: `i${i}`, attempts: 1 });

  it('appends every awaited record durably, resumes from snapshot + log, compacts on close', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const j = await Journal.open(dir, 'c', 'planhash');
    await Promise.all(Array.from({ length: 50 }, (_, i) => j.record(`t${i}`, entry(i))));
    const snapshot = JSON.parse(readFileSync(join(dir, 'journal.json'), 'utf8')) as JournalDocument;
    assert.equal(Object.keys(snapshot.tasks).length, 0, 'the snapshot is not rewritten per record');
    const log = readFileSync(join(dir, 'journal.log'), 'utf8').trim().split('\n');
    assert.ok(log.length >= 50 && log.length <= 100, `one line per record (${log.length})`);
    assert.equal(Object.keys((await readJournal(dir))?.tasks ?? {}).length, 50, 'every awaited record is on disk');
    const again = await Journal.open(dir, 'c', 'planhash');
    assert.equal(again.isDone('t7', 'i7'), true);
    assert.equal(again.isDone('t7', 'changed'), false, 'a changed input hash is not done');
    assert.equal(readFileSync(join(dir, 'journal.log'), 'utf8'), '', 'opening compacted the log into the snapshot');
    await again.record('t50', entry(50));
    await again.close();
    assert.deepEqual(readdirSync(dir), ['journal.json'], 'no log and no temp files left after close');
    const closed = JSON.parse(readFileSync(join(dir, 'journal.json'), 'utf8')) as JournalDocument;
    assert.equal(Object.keys(closed.tasks).length, 51);
  });

  it('a torn last line (kill -9 mid-append) is ignored; a torn middle line is a typed error', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const j = await Journal.open(dir, 'c', 'planhash');
    await j.record('a', entry(1));
    appendFileSync(join(dir, 'journal.log'), '{"id":"b","entry":{"state":"do');
    assert.equal((await Journal.open(dir, 'c', 'planhash', 'read')).isDone('a', 'i1'), true);
    assert.equal((await Journal.open(dir, 'c', 'planhash', 'read')).entry('b'), undefined);
    appendFileSync(join(dir, 'journal.log'), '\n{"id":"c","entry":{}}\n');
    await assert.rejects(
      readJournal(dir),
      (e: unknown) => e instanceof InputError && e.code === 'state.journal' && /journal\.log: line 2/.test(e.message),
    );
  });

  it('read mode (--check) writes nothing; a log without a snapshot is ignored', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    await Journal.open(dir, 'c', 'planhash', 'read');
    assert.deepEqual(readdirSync(dir), []);
    writeFileSync(join(dir, 'journal.log'), `${JSON.stringify({ id: 'x', entry: entry(1) })}\n`);
    assert.equal(await readJournal(dir), undefined);
    assert.equal((await Journal.open(dir, 'c', 'planhash')).entry('x'), undefined);
  });
});

describe('lock', () => {
  it('refuses a live holder and takes over a dead one', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
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
