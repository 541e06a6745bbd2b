// Blob downloads redirect to storage on another host (S3, a CDN): the
// registry's Authorization must not follow them there.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { registryGet } from '../src/registry/http.js';
import { makePki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('registry-redirect');
const servers: Server[] = [];
let ca = '';
let seenByStorage: (string | undefined)[] = [];
let registryPort = 0;

const listen = async (server: Server): Promise<number> => {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  return typeof a === 'object' && a !== null ? a.port : 0;
};

before(async () => {
  const pki = makePki(tmp.dir);
  ca = pki.caCert;
  const tls = pki.server('servers');
  const opts = { cert: readFileSync(tls.cert), key: readFileSync(tls.key) };
  const storagePort = await listen(
    createServer(opts, (req, res) => {
      seenByStorage.push(req.headers.authorization);
      res.end('blob');
    }),
  );
  registryPort = await listen(
    createServer(opts, (req, res) => {
      // A redirect within the registry keeps the header; to storage elsewhere it does not.
      if (req.url === '/final') res.end(String(req.headers.authorization));
      else if (req.url === '/same') res.writeHead(307, { location: '/final' }).end();
      else if (req.url === '/port') res.writeHead(307, { location: `https://127.0.0.1:${storagePort}/blob` }).end();
      else res.writeHead(307, { location: `https://localhost:${storagePort}/blob?sig=1` }).end();
    }),
  );
});

after(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  tmp.remove();
});

it('keeps Authorization within the registry, drops it when a redirect leaves host:port', async () => {
  seenByStorage = [];
  const headers = { authorization: 'Bearer secret-token' };
  const cross = await registryGet(`https://127.0.0.1:${registryPort}/cross`, {
    headers,
    ca: [ca],
    timeoutMs: 5000,
    maxBytes: 1024,
  });
  assert.equal(cross.body.toString(), 'blob');
  assert.match(cross.url, /^https:\/\/localhost:\d+\/blob\?sig=1$/);
  // Another port is another origin: dropped too.
  await registryGet(`https://127.0.0.1:${registryPort}/port`, { headers, ca: [ca], timeoutMs: 5000, maxBytes: 1024 });
  const same = await registryGet(`https://127.0.0.1:${registryPort}/same`, {
    headers,
    ca: [ca],
    timeoutMs: 5000,
    maxBytes: 1024,
  });
  assert.equal(same.body.toString(), 'Bearer secret-token');
  assert.deepEqual(seenByStorage, [undefined, undefined]);
});

it('caps the size and the time', async () => {
  await assert.rejects(
    registryGet(`https://127.0.0.1:${registryPort}/cross`, { ca: [ca], timeoutMs: 5000, maxBytes: 2 }),
    { code: 'registry.too-large' },
  );
});
