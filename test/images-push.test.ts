// Image bundles pushed into Debian's docker-registry with TLS (a cluster CA)
// and htpasswd auth on loopback, as `kubemix images push` and `up --images`
// do: a whole bundle (an index with Windows platforms, a chunked layer), a
// second push that sends no blob, a push killed with SIGKILL halfway that the
// next run finishes, a tampered blob refused and named, an OCI archive and a
// docker save archive read too. Bundles are made here: random layers, real
// OCI manifests and an index with linux and two Windows builds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import tar from 'tar-stream';
import { generateClusterCa } from '../src/exec/cluster-ca.js';
import { issueServingTls } from '../src/exec/serving-tls.js';
import { openBundle } from '../src/images/open.js';
import { pushBundles } from '../src/images/push.js';
import { pullImages } from '../src/images/pull.js';
import type { ClusterImage } from '../src/model/images.js';
import { DistributionClient } from '../src/registry/distribution.js';
import { registryFiles, startRegistry, type RunningRegistry } from './helpers/docker-registry.js';
import { REPO, scratch } from './helpers/shapes.js';

const PASSWORD = 'canary-push-pw-3b9d';
const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Writes blobs and returns descriptors; `layers` sizes in bytes. */
class Layout {
  readonly manifests: object[] = [];
  constructor(readonly dir: string) {
    mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
    writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  }
  blob(b: Buffer, mediaType: string): { mediaType: string; digest: string; size: number } {
    writeFileSync(join(this.dir, 'blobs', 'sha256', sha(b).slice(7)), b);
    return { mediaType, digest: sha(b), size: b.length };
  }
  image(os: string, layers: number[], osVersion?: string) {
    const config = this.blob(
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os,
          ...(osVersion ? { 'os.version': osVersion } : {}),
          rootfs: { type: 'layers', diff_ids: [] },
        }),
      ),
      'application/vnd.oci.image.config.v1+json',
    );
    const ls = layers.map((n) => this.blob(randomBytes(n), 'application/vnd.oci.image.layer.v1.tar+gzip'));
    const m = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config, layers: ls }),
    );
    return {
      ...this.blob(m, 'application/vnd.oci.image.manifest.v1+json'),
      platform: { os, architecture: 'amd64', ...(osVersion ? { 'os.version': osVersion } : {}) },
    };
  }
  index(children: object[]) {
    const b = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: children }),
    );
    return this.blob(b, 'application/vnd.oci.image.index.v1+json');
  }
  name(d: object, name: string): void {
    this.manifests.push({
      ...d,
      annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.split(':').at(-1) },
    });
    writeFileSync(join(this.dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: this.manifests }));
  }
}

async function tarDir(dir: string, out: string): Promise<void> {
  const pack = tar.pack();
  const done = pipeline(pack as unknown as NodeJS.ReadableStream, createWriteStream(out));
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r);
      else pack.entry({ name: r }, readFileSync(join(dir, r)));
    }
  };
  walk('');
  pack.finalize();
  await done;
}

describe('images push into docker-registry (TLS, htpasswd) on loopback', () => {
  const tmp = scratch('images-push');
  let registry: RunningRegistry;
  let storage = '';
  let caFile = '';
  let client: DistributionClient;
  const bundle = join(tmp.dir, 'bundle');
  let pauseIndex = '';

  before(async () => {
    const ca = generateClusterCa();
    const tls = issueServingTls(ca.cert, ca.key, 'localhost', '127.0.0.1', 30);
    caFile = join(tmp.dir, 'ca.crt');
    writeFileSync(caFile, ca.cert);
    writeFileSync(join(tmp.dir, 'tls.crt'), tls.cert);
    writeFileSync(join(tmp.dir, 'tls.key'), tls.key);
    const files = registryFiles(tmp.dir, 'kubemix', PASSWORD);
    storage = files.storage;
    registry = await startRegistry(
      tmp.dir,
      'push',
      storage,
      { cert: join(tmp.dir, 'tls.crt'), key: join(tmp.dir, 'tls.key') },
      { kind: 'htpasswd', path: files.htpasswd },
      ca.cert,
    );
    client = new DistributionClient({
      host: registry.host,
      credential: { username: 'kubemix', password: PASSWORD },
      ca: [ca.cert],
      timeoutMs: 60_000,
      chunkBytes: 256 * 1024,
    });
    const l = new Layout(bundle);
    const pause = l.index([
      l.image('linux', [2000]),
      l.image('windows', [3000], '10.0.20348.4052'),
      l.image('windows', [3000], '10.0.26100.4652'),
    ]);
    pauseIndex = pause.digest;
    l.name(pause, 'registry.k8s.io/pause:3.10.2');
    // A layer bigger than a chunk: the chunked upload path.
    l.name(l.image('linux', [1024 * 1024 + 17, 5000]), 'registry.k8s.io/kube-apiserver:v1.36.3');
    l.name(l.image('linux', [4000]), 'docker.io/library/busybox:1.37.0');
  });

  after(async () => {
    await registry?.stop();
    tmp.remove();
  });

  it('pushes a whole bundle; the index keeps its digest and its Windows platforms', async () => {
    const r = await pushBundles([await openBundle(bundle)], client);
    assert.equal(r.images, 3);
    assert.ok(r.blobsUploaded >= 9, `uploaded ${r.blobsUploaded}`);
    assert.equal(await client.manifestDigest('registry.k8s.io/pause', '3.10.2'), pauseIndex);
    const got = await client.getManifest('registry.k8s.io/pause', '3.10.2');
    assert.equal(got.digest, pauseIndex);
    const versions = (
      JSON.parse(got.body.toString()) as { manifests: { platform: { 'os.version'?: string } }[] }
    ).manifests.map((m) => m.platform['os.version'] ?? 'linux');
    assert.deepEqual(versions, ['linux', '10.0.20348.4052', '10.0.26100.4652']);
    assert.ok((await client.manifestDigest('docker.io/library/busybox', '1.37.0')) !== undefined);
  });

  it('a second push sends no blob and no manifest; the same bundle as an OCI archive neither', async () => {
    const again = await pushBundles([await openBundle(bundle)], client);
    assert.equal(again.blobsUploaded, 0);
    assert.equal(again.blobsMounted, 0);
    assert.equal(again.manifestsPut, 0);
    const archive = join(tmp.dir, 'bundle.tar');
    await tarDir(bundle, archive);
    const fromTar = await pushBundles([await openBundle(archive)], client);
    assert.equal(fromTar.blobsUploaded + fromTar.manifestsPut, 0);
  });

  it('images pull writes an OCI layout from a stand-in for upstream: indexes byte for byte; a cut pull goes on', async () => {
    const out = join(tmp.dir, 'pulled');
    const images = [
      { ref: 'registry.k8s.io/pause:3.10.2', registry: 'registry.k8s.io', repository: 'pause', tag: '3.10.2' },
      { ref: 'docker.io/library/busybox:1.37.0', registry: 'docker.io', repository: 'library/busybox', tag: '1.37.0' },
    ].map((i) => ({ ...i, platforms: ['linux/amd64'], usedBy: ['test'] }));
    // The registry holds them under /<upstream registry>/, as --registry-mirror REGISTRY=HOST/REGISTRY names it.
    const source = (i: ClusterImage) => ({ client, repo: `${i.registry}/${i.repository}` });
    const fetched: number[] = [];
    await pullImages(images, out, source, (e) => fetched.push(e.blobs));
    const pulled = await openBundle(out);
    assert.deepEqual(
      pulled.images.map((i) => [i.name, i.top.digest]),
      [
        ['registry.k8s.io/pause:3.10.2', pauseIndex],
        [
          'docker.io/library/busybox:1.37.0',
          (await client.manifestDigest('docker.io/library/busybox', '1.37.0')) ?? '',
        ],
      ],
    );
    // Every platform of the index came along: pushing the pulled bundle sends nothing.
    const again = await pushBundles([pulled], client);
    assert.equal(again.blobsUploaded + again.manifestsPut, 0);
    // A blob lost (a pull cut short): the next pull fetches that one only.
    const blobs = join(out, 'blobs', 'sha256');
    const config = readdirSync(blobs).find((f) => statSync(join(blobs, f)).size === 4000);
    assert.ok(config !== undefined);
    rmSync(join(blobs, config));
    const second: number[] = [];
    await pullImages(images, out, source, (e) => second.push(e.blobs));
    assert.deepEqual(second, [0, 1]);
  });

  it('a tampered blob is refused, named, and not in the registry', async () => {
    const dir = join(tmp.dir, 'tampered');
    const l = new Layout(dir);
    const m = l.image('linux', [6000]);
    l.name(m, 'ghcr.io/flannel-io/flannel:v0.28.4');
    const layer =
      (
        JSON.parse(readFileSync(join(dir, 'blobs', 'sha256', m.digest.slice(7)), 'utf8')) as {
          layers: { digest: string }[];
        }
      ).layers[0] ?? assert.fail();
    const file = join(dir, 'blobs', 'sha256', layer.digest.slice(7));
    writeFileSync(file, randomBytes(6000));
    await assert.rejects(pushBundles([await openBundle(dir)], client), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(`${file}.*hashes to sha256:[0-9a-f]{64}, but it must be ${layer.digest}; not pushed`),
      );
      return true;
    });
    assert.equal(await client.blobExists('ghcr.io/flannel-io/flannel', layer.digest), false);
    assert.equal(await client.manifestDigest('ghcr.io/flannel-io/flannel', 'v0.28.4'), undefined);
  });

  it('a docker save archive is pushed as an OCI manifest of its own files', async () => {
    const layerTar = randomBytes(8192);
    const config = Buffer.from(
      JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [sha(layerTar)] } }),
    );
    const out = join(tmp.dir, 'saved.tar');
    const pack = tar.pack();
    const done = pipeline(pack as unknown as NodeJS.ReadableStream, createWriteStream(out));
    const cfgName = `${sha(config).slice(7)}.json`;
    pack.entry(
      { name: 'manifest.json' },
      JSON.stringify([{ Config: cfgName, RepoTags: ['quay.io/example/tool:1.0'], Layers: ['abc/layer.tar'] }]),
    );
    pack.entry({ name: cfgName }, config);
    pack.entry({ name: 'abc/layer.tar' }, layerTar);
    pack.finalize();
    await done;
    const r = await pushBundles([await openBundle(out)], client);
    assert.equal(r.images, 1);
    const m = await client.getManifest('quay.io/example/tool', '1.0');
    const doc = JSON.parse(m.body.toString()) as {
      layers: { digest: string; mediaType: string }[];
      config: { digest: string };
    };
    assert.equal(doc.config.digest, sha(config));
    assert.deepEqual(doc.layers, [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha(layerTar), size: 8192 },
    ]);
  });

  it('kubemix images push killed with SIGKILL halfway: the next run skips what is there and finishes', async () => {
    const dir = join(tmp.dir, 'big');
    const l = new Layout(dir);
    for (let i = 0; i < 8; i += 1)
      l.name(
        l.image(
          'linux',
          Array.from({ length: 6 }, () => 2 * 1024 * 1024),
        ),
        `registry.k8s.io/big-${i}:v1`,
      );
    const pw = join(tmp.dir, 'pw');
    writeFileSync(pw, PASSWORD);
    const args = [
      'bin/kubemix.js',
      'images',
      'push',
      dir,
      '--registry',
      registry.host,
      '--ca-file',
      caFile,
      '--registry-auth',
      `${registry.host}=kubemix:${pw}`,
      '--json',
    ];
    const blobsIn = (): number => {
      try {
        return readdirSync(join(storage, 'docker/registry/v2/blobs/sha256')).flatMap((p) =>
          readdirSync(join(storage, 'docker/registry/v2/blobs/sha256', p)),
        ).length;
      } catch {
        return 0;
      }
    };
    const before = blobsIn();
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) =>
      child.once('exit', (code, signal) => r(signal === 'SIGKILL' ? -9 : code)),
    );
    while (blobsIn() < before + 10 && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    assert.equal(await exited, -9, 'killed before it finished (make the bundle bigger if this fails)');
    const total = 8 * 7;
    const resumed = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    resumed.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => resumed.once('exit', r));
    assert.equal(code, 0, out);
    const report = JSON.parse(out) as { blobsPresent: number; blobsUploaded: number; images: number };
    assert.equal(report.images, 8);
    assert.ok(report.blobsPresent >= 10, `present ${report.blobsPresent}`);
    assert.equal(report.blobsPresent + report.blobsUploaded, total);
    assert.ok(statSync(storage).isDirectory());
  });
});
