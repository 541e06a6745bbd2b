// Layer 1 when nodes cannot be reached (issue 31): each node is asked once,
// a node verify cannot run commands on is ONE failure naming it and what to
// do, and the cells from or to it are skipped with that reason — none of
// them blames UDP 4789 or the path. A UDP listener that never started is
// named as such. Transports here are stand-ins that refuse or answer as a
// down host, a host without root and a host whose listener dies would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecRequest, ExecResult, Transport } from '../src/transport/types.js';
import { planUnderlay, type UnderlayInput, type UnderlayPlan } from '../src/verify/underlay/plan.js';
import { runUnderlay } from '../src/verify/underlay/run.js';
import { judgeUdp, UNREACHED } from '../src/verify/underlay/judge.js';
import { MARK } from '../src/verify/underlay/scripts.js';
import { summarize } from '../src/verify/report.js';
import type { CheckResult } from '../src/verify/types.js';

type Behaviour = 'up' | 'down' | 'no-root' | 'listener-dies';

/** A node as the runner sees it: counts what it was asked, answers as `behaviour` says. */
class StandIn implements Transport {
  readonly scripts: string[] = [];
  constructor(
    readonly host: string,
    private readonly behaviour: Behaviour,
    private readonly listeners: ReadonlySet<string>,
  ) {}
  readonly connected = true;
  exec(r: ExecRequest): Promise<ExecResult> {
    this.scripts.push(r.script);
    const done = (code: number, stdout: string, stderr = ''): Promise<ExecResult> =>
      Promise.resolve({ code, timedOut: false, stdout, stderr, durationMs: 1 });
    if (this.behaviour === 'down') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.3:22'));
    if (this.behaviour === 'no-root') return done(1, '', 'sudo: a password is required\n');
    if (this.listeners.has(r.script)) {
      if (this.behaviour === 'listener-dies') return done(1, '', 'PermissionError: [Errno 13] Permission denied\n');
      const listening = `${MARK} listening\n`;
      r.onStdout?.(Buffer.from(listening));
      return done(0, `${listening}${MARK} done\n`);
    }
    return done(0, `${MARK} sent\n`);
  }
  upload(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const NODES = ['host-1', 'host-2', 'host-3'];
const input: UnderlayInput = {
  nodes: NODES.map((name, i) => ({
    name,
    address: `198.51.100.${i + 1}`,
    os: 'linux',
    role: i === 0 ? 'control-plane' : i === 1 ? 'worker' : 'services',
  })),
  nodeMtu: 1500,
  vxlanPort: 4789,
  hostGw: false,
  api: { address: '198.51.100.3', port: 6443, viaLoadBalancer: true },
  names: [{ name: 'api.verify.test', addresses: ['198.51.100.3'] }],
  installed: false,
  maxClockSkewMs: 2000,
};

async function run(
  behaviours: Readonly<Record<string, Behaviour>>,
): Promise<{ results: CheckResult[]; nodes: Map<string, StandIn>; plan: UnderlayPlan }> {
  const plan = planUnderlay(input);
  const listeners = new Set(plan.udp.map((g) => g.listener.script));
  const nodes = new Map(NODES.map((n) => [n, new StandIn(n, behaviours[n] ?? 'up', listeners)]));
  const results = await runUnderlay(plan, { transports: nodes, signal: new AbortController().signal });
  return { results, nodes, plan };
}

const touches = (r: CheckResult, node: string): boolean => r.source === node || r.target === node;
const blamesThePath = (r: CheckResult): boolean =>
  /rejected on the path|firewall drops UDP/.test(`${r.detail} ${r.cause}`);

describe('verify layer 1 with nodes it cannot reach', () => {
  it('one node down: one failure naming it and what to do; its cells skipped with that reason; asked once', async () => {
    const { results, nodes, plan } = await run({ 'host-2': 'down' });
    const ssh = results.filter((r) => r.probe === 'ssh');
    assert.equal(ssh.length, 1, JSON.stringify(ssh));
    const [down] = ssh as [CheckResult];
    assert.equal(down.id, 'underlay/ssh/deployer/host-2');
    assert.equal(down.status, 'fail');
    assert.match(down.detail, /^cannot reach node host-2 over SSH: connect ECONNREFUSED 127\.0\.0\.3:22; \d+ checks/);
    assert.match(down.cause ?? '', /sshd runs on it.*known_hosts.*run verify again/);
    const before = new Set(plan.skipped.map((r) => r.id));
    const blocked = results.filter((r) => r.probe !== 'ssh' && r.source === 'host-2' && !before.has(r.id));
    const intoIt = results.filter((r) => r.probe === 'udp-4789' && r.target === 'host-2');
    assert.ok(blocked.length > 0 && intoIt.length === 2);
    for (const r of [...blocked, ...intoIt]) {
      assert.equal(r.status, 'skip', r.id);
      assert.equal(r.detail, 'cannot reach host-2 over SSH (see underlay ssh deployer → host-2)');
    }
    assert.match(down.detail, new RegExp(`; ${blocked.length + intoIt.length} checks from or to it not run$`));
    // The other nodes' cells ran (their listeners hear nothing from the stand-ins: those cells fail, rightly).
    const ran = results.filter((r) => r.status !== 'skip' && r.probe !== 'ssh');
    assert.ok(ran.length > 0 && ran.every((r) => r.source !== 'host-2'));
    const blamed = results.filter((r) => touches(r, 'host-2') && blamesThePath(r));
    assert.equal(blamed.length, 0, JSON.stringify(blamed, null, 1));
    assert.deepEqual(nodes.get('host-2')?.scripts, ['exit 0\n'], 'the unreachable node is asked once');
    // Every planned check is still reported, exactly once.
    const planned = [...plan.probes, ...plan.udp.flatMap((g) => g.senders)].map((p) => p.id);
    assert.deepEqual(
      results
        .filter((r) => r.probe !== 'ssh')
        .map((r) => r.id)
        .sort(),
      [...planned, ...plan.skipped.map((s) => s.id)].sort(),
    );
  });

  it('every node down: exactly one failure per node, every other cell skipped, none blames UDP 4789', async () => {
    const { results } = await run({ 'host-1': 'down', 'host-2': 'down', 'host-3': 'down' });
    const failed = results.filter((r) => r.status === 'fail');
    assert.deepEqual(
      failed.map((r) => r.id),
      NODES.map((n) => `underlay/ssh/deployer/${n}`),
    );
    assert.equal(summarize(results).failed, 3);
    assert.ok(results.filter((r) => r.probe !== 'ssh').every((r) => r.status === 'skip'));
    assert.equal(results.filter(blamesThePath).length, 0);
  });

  it('a node where root is refused: reached, and the failure says root, not the network', async () => {
    const { results } = await run({ 'host-1': 'no-root' });
    const ssh = results.filter((r) => r.probe === 'ssh');
    assert.equal(ssh.length, 1);
    assert.match(
      ssh[0]?.detail ?? '',
      /^reached node host-1 over SSH, but a command as root fails there: exit 1: sudo: a password is required; \d+ checks/,
    );
    assert.match(ssh[0]?.cause ?? '', /without a password/);
    const needsIt = results.filter(
      (r) => (r.source === 'host-1' || (r.probe === 'udp-4789' && r.target === 'host-1')) && r.probe !== 'ssh',
    );
    assert.ok(needsIt.length > 0 && needsIt.every((r) => r.status === 'skip'));
  });

  it('a listener that never started on the target is named as such, not as UDP rejected', async () => {
    const { results } = await run({ 'host-2': 'listener-dies' });
    const into = results.filter((r) => r.probe === 'udp-4789' && r.target === 'host-2');
    assert.equal(into.length, 2);
    for (const r of into) {
      assert.equal(r.status, 'fail');
      assert.equal(
        r.detail,
        'the listener on host-2 never started: it did not run (exit 1: PermissionError: [Errno 13] Permission denied); nothing was sent',
      );
      assert.match(r.cause ?? '', /could not run the listener as root on host-2/);
    }
    assert.equal(results.filter((r) => r.target === 'host-2' && blamesThePath(r)).length, 0);
    const fine = results.filter((r) => r.probe === 'udp-4789' && r.target !== 'host-2');
    assert.ok(fine.length === 4 && fine.every((r) => r.status === 'fail' && /no datagram arrived/.test(r.detail)));
  });

  it('a sender whose node dropped out after the check: says it could not be reached, not UDP rejected', () => {
    const plan = planUnderlay(input);
    const sender = plan.udp[0]!.senders[0]!;
    const listening = { code: 0, timedOut: false, stdout: `${MARK} listening\n${MARK} done\n`, stderr: '' };
    const r = judgeUdp(sender, listening, {
      code: UNREACHED,
      timedOut: false,
      stdout: '',
      stderr: `cannot reach ${sender.source.name} over SSH: connection reset`,
    });
    assert.equal(r.detail, `cannot reach ${sender.source.name} over SSH: connection reset`);
    assert.equal(r.cause, undefined);
  });
});
