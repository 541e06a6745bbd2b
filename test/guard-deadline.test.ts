// guard's decision deadline follows the API server's `?timeout=` (the
// webhook's timeoutSeconds): a webhook installed with a longer timeout for a
// slow cluster is given that time, one without the parameter keeps the
// server's own deadline, and the answer leaves before the caller gives up.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { decisionDeadlineMs, goDurationMs } from '../src/guard/deadline.js';
import type { GuardServer } from '../src/guard/server.js';
import type { ImageOsResolver } from '../src/lint/image-os.js';
import { loopbackGuard } from './helpers/guard-server.js';
import { scratch } from './helpers/shapes.js';

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    operation: 'CREATE',
    namespace: 'default',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'a', image: 'example.com/team/api:1' }] },
    },
  },
});

describe('the decision deadline', () => {
  it('reads Go durations as the API server writes them', () => {
    assert.equal(goDurationMs('10s'), 10_000);
    assert.equal(goDurationMs('1m0s'), 60_000);
    assert.equal(goDurationMs('1m30s'), 90_000);
    assert.equal(goDurationMs('2.5s'), 2_500);
    assert.equal(goDurationMs('750ms'), 750);
    for (const bad of ['', '10', 's', '10 s', '-1s', '10x', '1s;rm']) assert.equal(goDurationMs(bad), undefined, bad);
  });

  it('leaves a tenth (at most 1 s) for the answer to travel, within the webhook API’s 30 s', () => {
    assert.equal(decisionDeadlineMs('10s', 9_000), 9_000);
    assert.equal(decisionDeadlineMs('30s', 9_000), 29_000);
    assert.equal(decisionDeadlineMs('5s', 9_000), 4_500);
    assert.equal(decisionDeadlineMs('5m0s', 9_000), 29_000);
    assert.equal(decisionDeadlineMs(null, 9_000), 9_000);
    assert.equal(decisionDeadlineMs('soon', 9_000), 9_000);
    assert.equal(decisionDeadlineMs('0s', 9_000), 9_000);
  });
});

describe('guard serve honours the caller’s timeout', () => {
  const tmp = scratch('guard-deadline');
  let guard: GuardServer;
  let port = 0;
  let ca = '';
  // A registry that takes 1.5 s to say what an image is.
  const slow: ImageOsResolver = {
    resolve: () => new Promise((r) => setTimeout(() => r({ os: 'windows', source: 'registry' }), 1_500)),
  };

  before(async () => {
    ({ guard, port, ca } = await loopbackGuard(tmp.dir, {
      resolver: slow,
      log: () => undefined,
      requestTimeoutMs: 500,
    }));
  });

  after(async () => {
    await guard.close();
    tmp.remove();
  });

  function post(path: string): Promise<{ status: number; text: string; ms: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', ca }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => void (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: Date.now() - started }));
      });
      req.on('error', reject);
      req.end(REVIEW);
    });
  }

  it('without a timeout in the call: its own deadline, then 503', async () => {
    const res = await post('/mutate');
    assert.equal(res.status, 503, res.text);
    assert.match(res.text, /no decision within 500 ms/);
  });

  it('with ?timeout=3s: waits for the slow decision and answers it', async () => {
    const res = await post('/mutate?timeout=3s');
    assert.equal(res.status, 200, res.text);
    assert.ok(res.ms >= 1_400, `${res.ms} ms`);
  });

  it('with ?timeout=1s: answers 503 before the caller gives up', async () => {
    const res = await post('/mutate?timeout=1s');
    assert.equal(res.status, 503, res.text);
    assert.match(res.text, /no decision within 900 ms/);
  });
});

describe('guard draining (SIGTERM) while a decision is in flight', () => {
  const tmp = scratch('guard-drain');
  after(() => tmp.remove());
  const slow: ImageOsResolver = {
    resolve: () => new Promise((r) => setTimeout(() => r({ os: 'windows', source: 'registry' }), 1_500)),
  };

  it('answers it with Connection: close and closes within seconds, not after the 120 s keep-alive', async () => {
    const { guard, port, ca } = await loopbackGuard(tmp.dir, { resolver: slow, log: () => undefined });
    const answer = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mutate?timeout=10s', method: 'POST', ca }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end(REVIEW);
    });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const closed = guard.close().then(() => 'closed');
    const got = await answer;
    assert.equal(got.status, 200);
    assert.equal(got.connection, 'close');
    const limit = new Promise<string>((r) => setTimeout(() => r('still open'), 8_000).unref());
    assert.equal(await Promise.race([closed, limit]), 'closed', `close() took over 8 s`);
    assert.ok(Date.now() - started < 8_000);
  });
});
