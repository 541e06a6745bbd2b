// spec.kubernetes.etcd against etcd itself (built here from the Go module
// proxy): kubemix must refuse at the spec exactly the timings etcd would
// refuse when kubeadm starts it, and what it accepts must reach etcd as the
// durations the spec wrote. Each case runs etcd on loopback with the flags
// kubemix renders (or, for a spec kubemix refuses, the values a user meant).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { InvalidSpecError } from '../src/errors.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { renderKubeadm } from '../src/render/kubeadm/config.js';
import { etcdMilliseconds } from '../src/spec/checks.js';
import { readSpec } from '../src/spec/read.js';
import { ETCD_TIMING_DEFAULTS } from '../src/spec/types.js';
import { freePort } from './helpers/docker-registry.js';
import { spawnBuilt } from './helpers/kube-binaries.js';
import { scratch } from './helpers/shapes.js';

type Timing = { heartbeatInterval?: string; electionTimeout?: string };
type Arg = { name: string; value: string };

const tmp = scratch('etcd-timing');
after(() => tmp.remove());

function spec(etcd: Timing): string {
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'timing' },
    spec: {
      kubernetes: { version: '1.36', etcd },
      network: { nodeCidr: '192.0.2.0/24' },
      infrastructure: {
        driver: 'existing',
        hosts: [{ name: 'cp1', address: '192.0.2.10', roles: ['control-plane'], os: 'debian-12' }],
      },
      services: { enabled: false },
    },
  });
}

/** The flags kubemix renders for etcd, or undefined when the spec is refused. */
function kubemixFlags(etcd: Timing): Arg[] | undefined {
  let model: ClusterModel;
  try {
    model = resolveModel(readSpec({ kind: 'file', path: 'timing.yaml', text: spec(etcd) }));
  } catch (error) {
    assert.ok(error instanceof InvalidSpecError, String(error));
    return undefined;
  }
  const node = model.nodes[0] ?? assert.fail('no node');
  const cluster = parseAllDocuments(renderKubeadm(model, node, true).content)
    .map((d) => d.toJS() as Record<string, any>)
    .find((d) => d['kind'] === 'ClusterConfiguration');
  return cluster?.['etcd']?.['local']?.['extraArgs'] as Arg[];
}

/** What etcd says of these flags: the timings it started with, or why it refused them. */
async function etcdVerdict(
  args: readonly Arg[],
  dir: string,
): Promise<{ started: { heartbeat: string; election: string } } | { refused: string }> {
  const [client, peer] = [await freePort(), await freePort()];
  const child = spawnBuilt(
    { name: 'etcd' },
    [
      `--data-dir=${dir}`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      ...args.map((a) => `--${a.name}=${a.value}`),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
      const line = log.split('\n').find((l) => l.includes('"msg":"starting an etcd server"'));
      if (line === undefined) return;
      const entry = JSON.parse(line) as Record<string, string>;
      child.kill('SIGKILL');
      resolve({ started: { heartbeat: entry['heartbeat-interval'] ?? '', election: entry['election-timeout'] ?? '' } });
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const refusal = /"msg":"failed to verify flags","error":"([^"]*)"/.exec(log);
      if (refusal !== null) resolve({ refused: refusal[1] ?? '' });
      else reject(new Error(`etcd exited ${code} without a verdict:\n${log.slice(-2000)}`));
    });
  });
}

/** Go's time.Duration text for whole milliseconds, as etcd logs them (1s, 2.5s, 200ms, 50s). */
function goMs(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${ms / 1000}s`;
}

const CASES: readonly { timing: Timing; why: string }[] = [
  { timing: { heartbeatInterval: '200ms', electionTimeout: '1s' }, why: 'exactly five heartbeats' },
  { timing: { heartbeatInterval: '201ms', electionTimeout: '1s' }, why: 'a millisecond under five heartbeats' },
  { timing: { heartbeatInterval: '300ms' }, why: "etcd's default election timeout takes part" },
  { timing: { electionTimeout: '400ms' }, why: "etcd's default heartbeat takes part" },
  { timing: { heartbeatInterval: '10s', electionTimeout: '50s' }, why: "etcd's longest election timeout" },
  { timing: { electionTimeout: '50001ms' }, why: 'a millisecond over it' },
  { timing: { heartbeatInterval: '1s', electionTimeout: '15s' }, why: "the real-cluster tier's" },
];

describe('spec.kubernetes.etcd agrees with etcd', () => {
  CASES.forEach(({ timing, why }, i) => {
    it(`${JSON.stringify(timing)}: ${why}`, async () => {
      const rendered = kubemixFlags(timing);
      const meant = Object.entries(timing).map(([k, v]) => ({
        name: k === 'heartbeatInterval' ? 'heartbeat-interval' : 'election-timeout',
        value: String(etcdMilliseconds(v)),
      }));
      const verdict = await etcdVerdict(rendered ?? meant, join(tmp.dir, `member-${i}`));
      if (rendered === undefined) {
        assert.ok('refused' in verdict, `kubemix refuses ${JSON.stringify(timing)}, etcd started with it`);
        return;
      }
      assert.ok(
        'started' in verdict,
        `kubemix accepts ${JSON.stringify(timing)}, etcd refused: ${JSON.stringify(verdict)}`,
      );
      assert.deepEqual(rendered, meant, 'the flags carry what the spec wrote, in milliseconds');
      const ms = (flag: string, fallback: number): number =>
        Number(rendered.find((a) => a.name === flag)?.value ?? fallback);
      assert.deepEqual(verdict.started, {
        heartbeat: goMs(ms('heartbeat-interval', ETCD_TIMING_DEFAULTS.heartbeatInterval)),
        election: goMs(ms('election-timeout', ETCD_TIMING_DEFAULTS.electionTimeout)),
      });
    });
  });
});
