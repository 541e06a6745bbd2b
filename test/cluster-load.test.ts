// The real-cluster tier's load client (test/e2e/cluster-load.ts), on
// loopback: what it measures during an upgrade is only worth something if it
// keeps sending until it is told to stop. In the tier's run 37 it ended on its
// own, exit 0, mid-upgrade: an answer cut off before its end left its request
// pending forever and nothing else kept Node running. A request left
// unanswered is asked once more through the next node, as a load balancer
// in front of NodePorts would; only a second miss fails it.
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

/** Answers `pod-a`, except the requests `cut` picks: their headers and half a body, then the connection is cut. */
async function cuttingServer(cut: (n: number) => boolean): Promise<{ server: Server; url: string }> {
  let n = 0;
  const server = createServer((_req, res) => {
    n += 1;
    if (cut(n)) {
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

/** Runs the client against `urls` for `ms`, then SIGTERM: it must still be running and exit 0. */
async function runClient(urls: readonly string[], log: string, ms: number): Promise<void> {
  const client = spawn(process.execPath, [repoPath('dist', 'test', 'e2e', 'cluster-load.js'), log, ...urls], {
    stdio: 'ignore',
  });
  try {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal(client.exitCode, null, 'still running after the cut-off answers');
    client.kill('SIGTERM');
    const [code] = (await once(client, 'exit')) as [number | null];
    assert.equal(code, 0);
  } finally {
    client.kill('SIGKILL');
  }
}

const CUT = / (aborted|the connection closed before the answer ended)$/;

describe('the tier’s load client', () => {
  it('asks a cut-off request again through the next node’s URL, and goes on until SIGTERM', async () => {
    const cutting = await cuttingServer(() => true);
    const good = await cuttingServer(() => false);
    const log = join(tmp.dir, 'next.log');
    try {
      await runClient([cutting.url, good.url], log, 1500);
    } finally {
      cutting.server.close();
      good.server.close();
    }
    const load = summarise(log);
    assert.equal(load.failed, 0, load.failures.join('\n'));
    assert.ok(load.missed >= 2, `${load.missed} retried`);
    assert.ok(load.sent >= 4, `${load.sent} requests in 1.5 s`);
    assert.equal(load.answers['pod-a'], load.sent);
  });

  it('fails a request that the next try leaves unanswered too', async () => {
    const { server, url } = await cuttingServer((n) => n > 1);
    const log = join(tmp.dir, 'both.log');
    try {
      await runClient([url], log, 1500);
    } finally {
      server.close();
    }
    const load = summarise(log);
    assert.ok(load.failed >= 2, load.failures.join('\n'));
    assert.equal(load.missed, load.failed);
    for (const f of load.failures) assert.match(f, CUT);
    assert.equal(load.answers['pod-a'], 1);
  });
});
