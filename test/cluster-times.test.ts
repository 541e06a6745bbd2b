// The real-cluster tier's clock (test/e2e/cluster-times.ts), on events shaped
// as a kubemix run emits them (`t` in ms since the process started).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partsText, runTimes } from './e2e/cluster-times.js';

const ev = (id: string, state: string, t: number, extra: Record<string, unknown> = {}) => ({
  type: 'task',
  id,
  state,
  t,
  ...extra,
});

describe('runTimes', () => {
  it('splits a run into busy and idle time, and kubemix’s per-task cost above the host’s', () => {
    const times = runTimes(
      [
        ev('a', 'running', 1000),
        ev('a', 'done', 3000, { elapsedMs: 2000, hostMs: 1500 }),
        ev('b', 'running', 5000),
        ev('b', 'done', 6000, { elapsedMs: 1000, hostMs: 500 }),
        ev('c', 'skipped', 6000),
      ],
      10,
    );
    assert.equal(times.busyS, 3);
    assert.equal(times.idleS, 7);
    assert.equal(times.ran, 2);
    assert.equal(times.skipped, 1);
    assert.equal(times.overheadPerTaskMs, 500);
  });

  it('splits kubemix’s per-task cost by where it went (the events’ phasesMs), the round trips above the host’s time, the bundle’s transfer apart', () => {
    const phases = (connect: number, commands: number, transfer: number) => ({
      connect,
      prepare: 10,
      transfer,
      compare: 20,
      upload: 0,
      commands,
      reboot: 0,
      finish: 5,
    });
    const times = runTimes(
      [
        ev('a', 'running', 0),
        ev('a', 'done', 4400, { elapsedMs: 4400, hostMs: 1000, phasesMs: phases(2000, 1900, 400) }),
        ev('b', 'running', 4400),
        ev('b', 'done', 6400, { elapsedMs: 2000, hostMs: 1500, phasesMs: phases(0, 1900, 0) }),
      ],
      7,
    );
    // The 400 ms the bundle took to reach the services node are not kubemix's cost: counted apart.
    assert.equal(times.transferS, 0.4);
    assert.equal(times.overheadPerTaskMs, 1750);
    assert.deepEqual(times.overheadParts, {
      connect: 1000,
      prepare: 10,
      compare: 20,
      upload: 0,
      'round trips': 650,
      reboot: 0,
      finish: 5,
      rest: 65,
    });
    // The parts are the whole cost: they add up to the per-task mean.
    const sum = Object.values(times.overheadParts ?? {}).reduce((a, ms) => a + ms, 0);
    assert.equal(sum, times.overheadPerTaskMs);
    assert.equal(
      partsText(times.overheadParts),
      'connect 1000, prepare 10, compare 20, round trips 650, finish 5, rest 65',
    );
  });

  it('a task still running when the run was killed kept its host busy until the end', () => {
    const times = runTimes([ev('init', 'running', 2000)], 10);
    assert.equal(times.busyS, 8);
    assert.equal(times.idleS, 2);
  });
});
