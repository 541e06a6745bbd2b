// More commands at once than the transport opens sessions for, on a host
// that cannot be reached: the ones queued for a session must fail with the
// connection's error too. They waited forever before (`kubemix verify
// --installed` on unreachable nodes: Node exited 13, no report, no message).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { KnownHostsFile } from './known-hosts.js';
import { TransportError } from './errors.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from './ssh.js';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  server.close();
  await once(server, 'close');
  return address.port;
}

function settledWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled after ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

describe('SshTransport on a host that refuses connections', () => {
  it('fails every command, also those queued behind maxSessions, and then fails the next ones', async () => {
    const t = new SshTransport(
      { name: 'w1', address: '127.0.0.1', port: await closedPort(), user: 'root', shell: 'sh', provisioner: 'user' },
      {
        ...DEFAULT_SSH_OPTIONS,
        knownHosts: new KnownHostsFile('/nonexistent/known_hosts'),
        trustNewHosts: false,
        maxSessions: 2,
      },
    );
    try {
      for (const round of [1, 2]) {
        const runs = Array.from({ length: 7 }, () => t.exec({ shell: 'sh', privilege: 'root', script: 'true' }));
        const outcomes = await settledWithin(Promise.allSettled(runs), 10_000);
        assert.deepEqual(
          outcomes.map((o) => o.status),
          Array.from({ length: 7 }, () => 'rejected'),
          `round ${round}`,
        );
        for (const o of outcomes)
          assert.ok(
            o.status === 'rejected' &&
              o.reason instanceof TransportError &&
              /ECONNREFUSED|refused/i.test(o.reason.message),
            `round ${round}: ${String((o as PromiseRejectedResult).reason)}`,
          );
      }
    } finally {
      await t.close();
    }
  });
});
