// The cloud image task (task-prepare-hypervisors/<hv>/image-<distro>) run
// for real against a web server on this machine's loopback: the matrix's URL
// behind the spec's artifact mirror, checked against the vendor's checksum
// list (Debian's SHA512SUMS, CentOS's BSD-format SHA256SUM); a tampered file
// refused and not cached; a local file:/// path with a pinned SHA256; fetched
// once (the check passes afterwards, no second request). The image path is
// moved into a temporary folder (the cache path itself is layout.ts's).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';

const hex = (algo: string, b: Buffer) => createHash(algo).update(b).digest('hex');

describe('cloud images are fetched once, verified, and a tampered file is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-images-'));
  const files = new Map<string, Buffer>();
  const requests: string[] = [];
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const body = files.get(req.url ?? '');
      res.writeHead(body === undefined ? 404 : 200).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mirror`;
  });
  after(() => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function task(
    os: string,
    downloads: Record<string, { url: string; sha256: string }> = {},
    windows?: { readonly os: string; readonly url?: string },
  ) {
    const text = stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'img' },
      spec: {
        infrastructure: { driver: 'libvirt', hypervisors: [{ name: 'hv', address: '127.0.0.1' }] },
        nodes: {
          controlPlane: { count: 1, distro: windows === undefined ? os : 'debian-13' },
          ...(windows === undefined ? {} : { workers: [{ name: 'win', count: 1, os: windows.os }] }),
        },
        services: { enabled: false },
        mirrors: { artifacts: base },
        downloads,
      },
    });
    const plan = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'img.yaml', text }))).plan;
    const t = plan.tasks.find((x) => x.id === `task-prepare-hypervisors/hv/image-${os}`) ?? assert.fail(os);
    const image = join(dir, `${os}.${windows === undefined ? 'qcow2' : 'iso'}`);
    // The matrix's URL of a vendor without a checksum list is replaced by this server's (no traffic elsewhere).
    const url = windows?.url;
    const local = (s: string) =>
      (url === undefined ? s : s.replace(/^url=.*$/m, `url='${url}'`)).replace(/^base=.*$/m, `base='${image}'`);
    // Asynchronous: the web server answers from this same process.
    const run = (s: string) =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn('sh', ['-c', local(s)], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
        child.on('close', (status) => resolve({ status, stderr }));
      });
    return { t, image, check: () => run(t.check?.script ?? 'exit 9'), apply: () => run(t.apply.script) };
  }

  it('Debian: the mirrored URL, SHA512SUMS checked, cached once; a second run fetches nothing', async () => {
    const img = randomBytes(4096);
    const dirPath = '/mirror/cloud.debian.org/images/cloud/trixie/latest';
    files.set(`${dirPath}/debian-13-genericcloud-amd64.qcow2`, img);
    files.set(
      `${dirPath}/SHA512SUMS`,
      Buffer.from(
        `${hex('sha512', randomBytes(8))}  other.qcow2\n${hex('sha512', img)}  debian-13-genericcloud-amd64.qcow2\n`,
      ),
    );
    const { image, check, apply } = task('debian-13');
    assert.equal((await check()).status, 1, 'nothing cached yet');
    const r = await apply();
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(image), img);
    assert.equal((await check()).status, 0, 'cached: the check passes');
    const before = requests.length;
    assert.equal((await apply()).status, 0);
    assert.equal(requests.length, before, 'no second download');
  });

  it('a tampered image is refused, deleted and not cached', async () => {
    const img = randomBytes(4096);
    const p = '/mirror/cloud.centos.org/centos/9-stream/x86_64/images/CentOS-Stream-GenericCloud-9-latest.x86_64.qcow2';
    files.set(p, Buffer.concat([img, Buffer.from('x')]));
    files.set(
      `${p}.SHA256SUM`,
      Buffer.from(`# CentOS\nSHA256 (CentOS-Stream-GenericCloud-9-latest.x86_64.qcow2) = ${hex('sha256', img)}\n`),
    );
    const { image, apply, check } = task('centos-stream-9');
    const r = await apply();
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^refusing http:\/\/127\.0\.0\.1:\d+\/mirror\/cloud\.centos\.org\/.* its sha256 is [0-9a-f]{64}, expected [0-9a-f]{64} \(spec\.downloads\.images\/centos-stream-9: tampered, truncated or the wrong file\); nothing cached$/m,
    );
    assert.equal(existsSync(image), false);
    assert.equal(existsSync(`${image}.part`), false);
    assert.equal((await check()).status, 1);
    // The genuine file passes the same BSD-format list.
    files.set(p, img);
    assert.equal((await apply()).status, 0);
    assert.deepEqual(readFileSync(image), img);
  });

  it('a local file:/// (or file://localhost/) path with a pinned SHA256, and a pin that does not match it', async () => {
    const img = randomBytes(2048);
    const file = join(dir, 'local.qcow2');
    writeFileSync(file, img);
    const good = task('ubuntu-24.04', {
      'images/ubuntu-24.04': { url: `file://${file}`, sha256: hex('sha256', img).toUpperCase() },
    });
    assert.equal((await good.apply()).status, 0);
    assert.deepEqual(readFileSync(good.image), img);
    // file://localhost/p names the same file as file:///p (RFC 8089).
    const local = task('centos-stream-9', {
      'images/centos-stream-9': { url: `file://localhost${file}`, sha256: hex('sha256', img) },
    });
    const r0 = await local.apply();
    assert.equal(r0.status, 0, r0.stderr);
    assert.deepEqual(readFileSync(local.image), img);
    const bad = task('debian-12', { 'images/debian-12': { url: `file://${file}`, sha256: 'a'.repeat(64) } });
    const r = await bad.apply();
    assert.equal(r.status, 2);
    assert.match(r.stderr, /refusing file:\/\/.*local\.qcow2: its sha256 is/);
    assert.equal(existsSync(bad.image), false);
  });

  it('a distro without a known image asks for the spec pin, naming the path', () => {
    assert.throws(
      () => task('fedora-44'),
      (e: Error & { path?: string }) => {
        assert.match(e.message, /no cloud image for fedora-44/);
        assert.equal(e.path, 'spec.downloads.images/fedora-44');
        return true;
      },
    );
  });

  it('Windows install ISO and virtio-win: a pinned SHA256 is checked, naming the spec field when it does not match', async () => {
    const iso = randomBytes(4096);
    files.set('/iso/ws2022.iso', iso);
    const url = `${base.replace(/\/mirror$/, '')}/iso/ws2022.iso`;
    const bad = task(
      'windows-2022',
      { 'images/windows-2022': { url, sha256: 'b'.repeat(64) } },
      { os: 'windows-2022' },
    );
    assert.match(bad.t.description, /install ISO .*checked against the pinned SHA256/);
    const r = await bad.apply();
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /refusing .*ws2022\.iso: its sha256 is [0-9a-f]{64}, expected b{64} \(spec\.downloads\.images\/windows-2022: /,
    );
    assert.equal(existsSync(bad.image), false, 'nothing cached');
    const good = task(
      'windows-2022',
      { 'images/windows-2022': { url, sha256: hex('sha256', iso) } },
      { os: 'windows-2022' },
    );
    assert.equal((await good.apply()).status, 0);
    assert.deepEqual(readFileSync(good.image), iso);
    assert.equal((await good.check()).status, 0, 'cached once');
  });

  it('virtio-win without a pin is kept as served, and says how to pin it', async () => {
    const iso = randomBytes(1024);
    files.set('/iso/virtio-win.iso', iso);
    const url = `${base.replace(/\/mirror$/, '')}/iso/virtio-win.iso`;
    const t = task('virtio-win', {}, { os: 'windows-2025', url });
    assert.match(t.t.description, /not checksummed \(pin spec\.downloads\.images\/virtio-win\.sha256\)/);
    const r = await t.apply();
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(t.image), iso);
  });

  it('a file:/// install ISO that is not on the hypervisor fails naming the spec field, caching nothing', async () => {
    const missing = join(dir, 'no-such.iso');
    const t = task(
      'windows-2025',
      { 'images/windows-2025': { url: `file://${missing}`, sha256: 'c'.repeat(64) } },
      { os: 'windows-2025' },
    );
    const r = await t.apply();
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      new RegExp(`^spec\\.downloads\\.images/windows-2025\\.url: no file ${missing} on this hypervisor$`, 'm'),
    );
    assert.equal(existsSync(t.image), false);
    assert.equal(existsSync(`${t.image}.part`), false);
  });
});
