// A host that accepts TCP but never finishes the SSH handshake (a VM still
// booting): ssh2 reports the handshake timeout, and then, when the socket
// closes, "Connection lost before handshake" as a second error. The second one
// must not reach the process as an uncaught 'error' event (kubemix crashed on
// it while add-node waited for a booting worker).
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectEndpoint } from './ssh-connect.js';
import { KnownHostsFile } from './known-hosts.js';
import { TransportError } from './errors.js';

describe('connectEndpoint against a host that never answers the handshake', () => {
  it('rejects once with the timeout and absorbs the later socket error', async () => {
    const sockets: Socket[] = [];
    const server = createServer((s) => void sockets.push(s));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    assert.ok(address !== null && typeof address === 'object');
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const connecting = connectEndpoint(
        { label: 'w1', address: '127.0.0.1', port: address.port, user: 'root', pinned: false },
        {
          knownHosts: new KnownHostsFile('/nonexistent/known_hosts'),
          trustNewHosts: false,
          keepaliveIntervalMs: 0,
          keepaliveCountMax: 3,
          readyTimeoutMs: 200,
        },
      );
      await assert.rejects(connecting, (e: unknown) => e instanceof TransportError && /handshake/.test(e.message));
      // The host drops the connection afterwards, as a booting VM's sshd does.
      for (const s of sockets) s.destroy();
      await sleep(300);
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      for (const s of sockets) s.destroy();
      server.close();
    }
  });
});
