import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan, taskId } from './harness/plan-builder.js';
import { newStateDir, run, writeKnownHosts } from './harness/fixture.js';

const skip = harnessAvailable();

describe('secrets on real sshd hosts', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  before(async () => {
    net = await TestNet.create(2);
  });
  after(async () => net?.cleanup());

  it('fills secrets via stdin and 0600 files; no value in logs, journal, events or process tables', async () => {
    const kh = writeKnownHosts(net);
    const [a, b] = [net.hosts[0]!, net.hosts[1]!];
    const plan = buildPlan(
      net.hosts.map((h) => net.connection(h)),
      [
        {
          host: a.name,
          name: 'use-canary',
          check: null,
          secrets: ['canary-password', 'cluster-join-token', 'cluster-certificate-key'],
          apply: `printf '%s' '{{secret:canary-password}}' > ${a.dir}/canary.txt; echo "the canary is {{secret:canary-password}}"; echo '{{secret:cluster-join-token}} {{secret:cluster-certificate-key}}' > ${a.dir}/kubeadm.txt; sleep 1.5`,
          uploads: [`${a.name}:${a.dir}/conf.txt`],
        },
        {
          host: b.name,
          name: 'produce',
          check: `test -s ${b.dir}/captured`,
          apply: `umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' > ${b.dir}/captured`,
          captures: [{ name: 'ca-hash', remotePath: `${b.dir}/captured` }],
        },
        {
          host: a.name,
          name: 'consume',
          after: [taskId({ host: b.name, name: 'produce' })],
          check: null,
          secrets: ['ca-hash'],
          apply: `printf '%s' '{{secret:ca-hash}}' > ${a.dir}/consumed; echo 'hash {{secret:ca-hash}}' >&2; sleep 1`,
        },
      ],
      [
        {
          node: a.name,
          remotePath: `${a.dir}/conf.txt`,
          content: 'password={{secret:canary-password}}\n',
          mode: '0644',
        },
      ],
    );
    const state = newStateDir(net);
    const samples: string[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        for (const h of net.hosts) samples.push(net.processTable(h));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const r = await run(plan, state, kh);
    polling = false;
    await poller;
    assert.equal(r.error, undefined, String(r.error));
    const store = JSON.parse(readFileSync(join(state, 'secrets.json'), 'utf8')) as Record<
      string,
      { value: string; source: string }
    >;
    assert.equal(statSync(join(state, 'secrets.json')).mode & 0o777, 0o600);
    const canary = store['canary-password']?.value ?? '';
    const captured = store['ca-hash']?.value ?? '';
    assert.match(canary, /^[A-Za-z0-9]{32}$/);
    assert.match(store['cluster-join-token']?.value ?? '', /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.match(store['cluster-certificate-key']?.value ?? '', /^[0-9a-f]{64}$/);
    assert.equal(store['ca-hash']?.source, 'captured');
    assert.equal(readFileSync(join(a.dir, 'canary.txt'), 'utf8'), canary);
    assert.equal(readFileSync(join(a.dir, 'conf.txt'), 'utf8'), `password=${canary}\n`);
    assert.equal(statSync(join(a.dir, 'conf.txt')).mode & 0o777, 0o600, 'a file holding a secret is written 0600');
    assert.equal(readFileSync(join(a.dir, 'consumed'), 'utf8'), captured);
    assert.ok(samples.length > 10, 'the process tables were polled while tasks ran');
    assert.ok(
      samples.some((s) => s.includes('sleep 1')),
      'the polls saw the tasks running',
    );
    const logs = readdirSync(join(state, 'logs'))
      .map((f) => readFileSync(join(state, 'logs', f), 'utf8'))
      .join('\n');
    assert.match(logs, /the canary is <redacted:canary-password>/);
    assert.match(logs, /hash <redacted:ca-hash>/);
    const places = {
      logs,
      journal: readFileSync(join(state, 'journal.json'), 'utf8'),
      events: r.events.serialise(),
      ps: samples.join('\n'),
    };
    for (const [where, text] of Object.entries(places)) {
      for (const secret of [canary, captured]) assert.ok(!text.includes(secret), `a secret leaked into ${where}`);
    }
    const output = execFileSync('node', ['bin/kubemix.js', 'logs', '--state-dir', state, a.name], { encoding: 'utf8' });
    assert.match(output, /<redacted:canary-password>/);
    assert.ok(!output.includes(canary));
  });

  it('a link taken down mid-task is retried and the task completes', async () => {
    const kh = writeKnownHosts(net);
    const h = net.hosts[0]!;
    const dir = join(h.dir, 'flap');
    const plan = buildPlan(
      [net.connection(h)],
      [
        {
          host: h.name,
          name: 'slow',
          check: `test -f ${dir}/done`,
          apply: `mkdir -p ${dir}; sleep 2; echo applied >> ${dir}/apply.log; touch ${dir}/done`,
        },
      ],
    );
    const state = newStateDir(net);
    let flapped: Promise<void> | undefined;
    const r = await run(plan, state, kh, {
      listeners: [
        (e) => {
          if (e.type === 'host:connected' && flapped === undefined) {
            flapped = new Promise((resolve) => {
              setTimeout(() => net.link(h, 'down'), 500);
              setTimeout(() => (net.link(h, 'up'), resolve()), 3500);
            });
          }
        },
      ],
    });
    await flapped;
    assert.equal(r.error, undefined, String(r.error));
    const states = r.events.ofType('task').map((e) => e.state);
    assert.ok(states.includes('retrying'), `retried: ${states.join(',')}`);
    assert.equal(states.at(-1), 'done');
    assert.ok(r.events.ofType('host:connected').length >= 2, 'reconnected');
    assert.ok(readFileSync(join(dir, 'apply.log'), 'utf8').length > 0);
  });
});
