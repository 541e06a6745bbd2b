// How the real-cluster tier runs kubectl (test/e2e/cluster-kubectl.ts): which answers it tries again,
// and how long one kubectl process may run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUSY, UNREACHABLE, isRead, kubectlLimitMs } from './e2e/cluster-kubectl.js';

describe('the tier’s kubectl', () => {
  it('lets a command with its own --timeout run that long and a minute more (run 26: 300 s cut a 900 s rollout)', () => {
    assert.equal(kubectlLimitMs(['rollout', 'status', 'deployment/g', '--timeout=900s']), 960_000);
    assert.equal(kubectlLimitMs(['wait', '--for=condition=Ready', 'pod/x', '--timeout=20m']), 1_260_000);
  });

  it('gives any other command 5 min', () => {
    assert.equal(kubectlLimitMs(['get', 'nodes']), 300_000);
    assert.equal(kubectlLimitMs(['get', 'pods', '--request-timeout=5s']), 300_000);
  });

  it('tries reads again when the server was busy, writes only when it was never reached', () => {
    assert.ok(isRead(['rollout', 'status', 'deployment/web']));
    assert.ok(isRead(['get', 'nodes']));
    assert.ok(!isRead(['rollout', 'restart', 'deployment/web']));
    assert.ok(!isRead(['apply', '-f', 'x.yaml']));
    assert.match('Unable to connect to the server: dial tcp 10.126.0.2:6443: i/o timeout', UNREACHABLE);
    assert.match('Error from server (Timeout): the server was unable to return a response in the time allotted', BUSY);
    assert.doesNotMatch('Error from server (Forbidden): pods is forbidden', BUSY);
  });
});
