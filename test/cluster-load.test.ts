// The real-cluster tier's load client (test/e2e/cluster-load.ts), on
// loopback: what it measures during an upgrade is only worth something if it
// keeps sending until it is told to stop. In the tier's run 37 it ended on its
// own, exit 0, mid-upgrade: an answer cut off before its end left its request
// pending forever and nothing else kept Node running.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { summarise } from './e2e/cluster-load.js';
import { repoPath } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('cluster-load');
after(() => tmp.remove());

/** Answers `pod-a`; the second request gets its headers and half a body, then the connection is cut. */
async function cuttingServer(): Promise<{ server: Server; url: string }> {
  let n = 0;
  const server = createServer((_req, res) => {
    n += 1;
    if (n === 2) {
      res.writeHead(200, { 'content-length': '100' });
      res.write('pod-');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.end('pod-a\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('the tier’s load client', () => {
  it('counts an answer cut off mid-body as failed and goes on until SIGTERM', async () => {
    const { server, url } = await cuttingServer();
    const log = join(tmp.dir, 'load.log');
    const client = spawn(process.execPath, [repoPath('dist', 'test', 'e2e', 'cluster-load.js'), log, url], {
      stdio: 'ignore',
    });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(client.exitCode, null, 'still running after the cut-off answer');
      client.kill('SIGTERM');
      const [code] = (await once(client, 'exit')) as [number | null];
      assert.equal(code, 0);
    } finally {
      client.kill('SIGKILL');
      server.close();
    }
    const load = summarise(log);
    assert.equal(load.failed, 1, load.failures.join('\n'));
    assert.match(load.failures[0] ?? '', / fail (aborted|the connection closed before the answer ended)$/);
    assert.ok(load.sent >= 4, `${load.sent} requests in 1.5 s`);
    assert.equal(load.answers['pod-a'], load.sent - 1);
  });
});
