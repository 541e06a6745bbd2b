// containerd: every rendered config.toml parsed as TOML and checked against
// the keys of its line; hosts.toml likewise; the download script run against
// a loopback server to prove it installs only what matches its sha256.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'smol-toml';
import { IMAGES, containerdLine } from '../src/matrix/index.js';
import { downloadScript } from '../src/plan/tasks/download.js';
import { shell } from '../src/util/escape/index.js';
import { SHAPES, planFor, scratch } from './helpers/shapes.js';

type Table = Record<string, unknown>;
const at = (doc: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((t, k) => (t as Table | undefined)?.[k], doc);

/** What each config version must say (containerd docs/cri/config.md), as [path, expected] pairs. */
function expectedKeys(pause: string, version: number): [string[], unknown][] {
  const images = ['plugins', 'io.containerd.cri.v1.images'];
  const runtime = ['plugins', 'io.containerd.cri.v1.runtime'];
  return [
    [['version'], version],
    [[...images, 'pinned_images', 'sandbox'], `${IMAGES.pause.repository}:${pause}`],
    [[...images, 'registry', 'config_path'], '/etc/containerd/certs.d'],
    [[...runtime, 'cni', 'bin_dirs'], ['/opt/cni/bin']],
    [[...runtime, 'cni', 'conf_dir'], '/etc/cni/net.d'],
    [[...runtime, 'containerd', 'default_runtime_name'], 'runc'],
    [[...runtime, 'containerd', 'runtimes', 'runc', 'runtime_type'], 'io.containerd.runc.v2'],
    [[...runtime, 'containerd', 'runtimes', 'runc', 'options', 'SystemdCgroup'], true],
  ];
}

describe('containerd config.toml', () => {
  for (const shape of SHAPES) {
    it(`${shape}: every node's config.toml parses and has the keys of its line`, () => {
      const { plan, files } = planFor(shape);
      const configs = files.filter((f) => f.remotePath === '/etc/containerd/config.toml');
      assert.equal(configs.length, plan.nodes.filter((n) => n.osFamily === 'linux' && n.role !== 'services').length);
      const line = containerdLine(plan.cluster.versions.containerd?.split('.').slice(0, 2).join('.') ?? '');
      const version: number = line?.configVersion ?? 0;
      assert.equal(version, 4, 'containerd 2.3 writes config version 4');
      for (const f of configs) {
        const doc = parse(f.content);
        for (const [path, want] of expectedKeys(plan.cluster.versions.pause ?? '', version))
          assert.deepEqual(at(doc, ...path), want, `${f.localPath}: ${path.join('.')}`);
        // containerd 1.x's CRI plugin name must not linger in a version 3 config.
        assert.equal(at(doc, 'plugins', 'io.containerd.grpc.v1.cri'), undefined);
      }
    });

    it(`${shape}: hosts.toml for the services registry trusts the cluster CA`, () => {
      const hosts = planFor(shape).files.filter((f) => f.remotePath.endsWith('/hosts.toml'));
      assert.ok(hosts.length > 0);
      for (const f of hosts) {
        const doc = parse(f.content);
        const server = at(doc, 'server') as string;
        assert.equal(server, 'https://registry.k8scluster.kubeinit.local:5000');
        assert.deepEqual(at(doc, 'host', server, 'capabilities'), ['pull', 'resolve', 'push']);
        assert.equal(
          at(doc, 'host', server, 'ca'),
          '/etc/containerd/certs.d/registry.k8scluster.kubeinit.local:5000/ca.crt',
        );
      }
    });
  }
});

describe('release download with sha256 verification', () => {
  const tmp = scratch('download');
  const payload = 'pretend release tarball\n';
  const digest = createHash('sha256').update(payload).digest('hex');
  const served: Record<string, string> = {
    '/github.com/x/releases/good.tgz': payload,
    '/github.com/x/releases/good.tgz.sha256': `${digest}  good.tgz\n`,
    '/github.com/x/releases/bad.tgz': payload,
    '/github.com/x/releases/bad.tgz.sha256': `${'0'.repeat(64)}  bad.tgz\n`,
  };
  let server: Server | undefined;
  let mirror = '';
  before(async () => {
    server = createServer((req, res) => {
      const body = served[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200).end(body);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    mirror = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  after(() => {
    server?.close();
    tmp.remove();
  });

  // Asynchronous: the loopback server answers from this same event loop.
  const run = (name: string): Promise<number> => {
    const url = `https://github.com/x/releases/${name}`;
    const script = downloadScript(
      { url, checksumUrl: `${url}.sha256`, install: shell`cp "$file" ${join(tmp.dir, name)}` },
      mirror,
    );
    const child = spawn('sh', ['-s'], { stdio: ['pipe', 'ignore', 'ignore'], timeout: 20_000 });
    child.stdin.end(script.text);
    return new Promise((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  };

  it('installs a file whose sha256 matches the published one', async () => {
    assert.equal(await run('good.tgz'), 0);
    assert.equal(readFileSync(join(tmp.dir, 'good.tgz'), 'utf8'), payload);
  });

  it('refuses a file whose sha256 does not match, and one without a published sum', async () => {
    assert.notEqual(await run('bad.tgz'), 0);
    assert.equal(existsSync(join(tmp.dir, 'bad.tgz')), false);
    assert.notEqual(await run('missing.tgz'), 0);
  });
});
