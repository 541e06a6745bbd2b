// Layer 1's Linux TCP probe run for real with bash's /dev/tcp on loopback: it
// passes at the first answer, calls a refusal a refusal at once, and says
// nothing answered only after TCP_TRIES tries of 5 s (run 29 of the
// real-cluster tier failed a cluster on one try from a busy emulated node). The
// tries that time out are made by a `timeout` on PATH that reports 124 the
// first N times (a silent network takes 5 s a try; the loop is what is tested).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { judgeProbe } from '../src/verify/underlay/judge.js';
import type { Probe } from '../src/verify/underlay/plan.js';
import { linuxTcp, MARK, TCP_TRIES } from '../src/verify/underlay/scripts.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('verify-underlay-tcp');
let server: Server;
let open = 0;
let closed = 0;

before(async () => {
  server = createServer((socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open = (server.address() as AddressInfo).port;
  // A port nothing listens on: bind, note it, close.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closed = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
});

after(async () => {
  await new Promise((r) => server.close(r));
  tmp.remove();
});

/** The probe's script with `timeout` answering 124 (no answer) its first `silent` calls; its output and call count. */
function probe(port: number, silent: number): { stdout: string; calls: number } {
  const bin = join(tmp.dir, `bin-${port}-${silent}`);
  const count = join(bin, 'calls');
  mkdirSync(bin, { recursive: true });
  writeFileSync(count, '');
  writeFileSync(
    join(bin, 'timeout'),
    `#!/bin/sh\necho x >> '${count}'\n[ "$(wc -l < '${count}')" -le ${silent} ] && exit 124\nPATH="$REAL_PATH" exec timeout "$@"\n`,
  );
  chmodSync(join(bin, 'timeout'), 0o755);
  const path = process.env['PATH'] ?? '/usr/bin:/bin';
  const r = spawnSync('sh', ['-c', linuxTcp('127.0.0.1', port).script], {
    encoding: 'utf8',
    env: { PATH: `${bin}:${path}`, REAL_PATH: path },
  });
  return { stdout: r.stdout, calls: readFileSync(count, 'utf8').split('\n').filter(Boolean).length };
}

/** What verify reports for that output. */
function verdict(port: number, stdout: string) {
  const script = linuxTcp('127.0.0.1', port);
  const probe: Probe = {
    id: `underlay/tcp-${port}/a/b`,
    probe: `tcp-${port}`,
    source: { name: 'a', address: '127.0.0.1', os: 'linux', role: 'worker' },
    target: 'b',
    shell: 'sh',
    ...script,
    expect: { kind: 'tcp', port },
  };
  return judgeProbe(probe, { code: 0, timedOut: false, stdout, stderr: '' });
}

describe('layer 1 TCP probe (bash /dev/tcp)', () => {
  it('an open port passes at the first try', () => {
    const r = probe(open, 0);
    assert.match(r.stdout, new RegExp(`${MARK} ok`));
    assert.equal(r.calls, 1);
  });

  it('tries again when a try gets no answer, and passes when a later one does', () => {
    const r = probe(open, TCP_TRIES - 1);
    assert.match(r.stdout, new RegExp(`${MARK} ok`));
    assert.equal(r.calls, TCP_TRIES);
    assert.equal(verdict(open, r.stdout).status, 'pass');
  });

  it(`says nothing answered only after ${TCP_TRIES} silent tries`, () => {
    const r = probe(open, 99);
    assert.match(r.stdout, new RegExp(`${MARK} timeout`));
    assert.equal(r.calls, TCP_TRIES);
    const v = verdict(open, r.stdout);
    assert.equal(v.status, 'fail');
    assert.equal(v.detail, `no answer on port ${open} in ${TCP_TRIES} tries of 5 s`);
  });

  it('a refusal is an answer: no second try', () => {
    const r = probe(closed, 0);
    assert.match(r.stdout, new RegExp(`${MARK} fail`));
    assert.equal(r.calls, 1);
  });
});
