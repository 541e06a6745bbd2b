// The webhook's metrics count what the client got: a request whose client
// went away mid-body is `aborted`, one cut off by the server's request
// timeout is 408 — neither is a /mutate 200.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { after, before, it } from 'node:test';
import type { GuardServer } from '../src/guard/server.js';
import { heuristicResolver } from '../src/lint/image-os.js';
import { loopbackGuard } from './helpers/guard-server.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('guard-metrics');
let guard: GuardServer;
let port = 0;
let ca = '';
const logs: Record<string, unknown>[] = [];

before(async () => {
  ({ guard, port, ca } = await loopbackGuard(tmp.dir, {
    resolver: heuristicResolver,
    log: (l) => void logs.push(l),
    requestTimeoutMs: 300,
  }));
});

after(async () => {
  await guard.close();
  tmp.remove();
});

/** Sends the headers of a POST /mutate promising 1000 bytes and 10 of them; returns the raw TLS socket. */
function partialPost(): Promise<ReturnType<typeof connect>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      socket.write(
        'POST /mutate HTTP/1.1\r\nHost: guard\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersi',
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', ca }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => void (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });
}

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an aborted request is counted as aborted, a timed-out one as 408, neither as 200', async () => {
  const aborted = await partialPost();
  await settle(100);
  aborted.destroy();
  const slow = await partialPost();
  let answer = '';
  slow.on('data', (c: Buffer) => void (answer += c.toString()));
  const closed = new Promise<void>((r) => slow.once('close', () => r()));
  slow.on('error', () => undefined);
  await closed;
  assert.match(answer, /^HTTP\/1\.1 408 /);
  await settle(100);
  const text = await metrics();
  assert.match(text, /^kubemix_guard_requests_total\{route="\/mutate",code="aborted"\} 1$/m);
  assert.match(text, /^kubemix_guard_requests_total\{route="\/mutate",code="408"\} 1$/m);
  assert.doesNotMatch(text, /route="\/mutate",code="200"/);
  assert.ok(
    logs.some((l) => l['route'] === '/mutate' && l['status'] === 'aborted'),
    JSON.stringify(logs),
  );
});
