// The VM tier's components, built here (gobuild/README.md): `gobuild/build.sh
// images-<minor>` (default 1.36; KUBEMIX_IMAGES_MINOR picks another) and
// gobuild/guard-image.sh, then what they made is held against real readers:
//   - the images are exactly those the release's real kubeadm lists, plus the
//     flannel images and the pause kubemix's containerd config names;
//   - each archive is an OCI image layout whose every blob matches its digest,
//     whose layers match the config's diff_ids, named as containerd reads it;
//   - Debian's docker-registry on loopback takes every image, blob by blob, and
//     serves the same manifest back by tag;
//   - the containerd and runc built here import every archive and run
//     containers from them (pause stopped by SIGTERM, kube-proxy's iptables,
//     CoreDNS binding :53 as non-root, kubemix's own CLI);
//   - the node downloads sit at their upstream URLs' paths with checksum files
//     kubemix's deployer reads (publishedHash), and the binaries report the
//     versions kubemix's install checks grep for;
//   - pause, as PID 1 of a PID namespace, reaps an orphan and exits 0 on SIGTERM.
// Slow the first time (it builds everything): VM tier only (KUBEMIX_E2E=1).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  COMPONENTS,
  CONTAINERD,
  DEFAULT_CONTAINERD_LINE,
  IMAGES,
  kubernetesRelease,
  linuxDownloads,
} from '../../src/matrix/index.js';
import { publishedHash } from '../../src/exec/downloads.js';
import { VERSION } from '../../src/version.js';
import { repoPath } from '../helpers/cli.js';
import { startRegistry, type RunningRegistry } from '../helpers/docker-registry.js';
import { call, OCI_MANIFEST, pushBlob, type Target } from '../helpers/oci-push.js';
import {
  fileInImage,
  readArchive,
  layerEntries,
  sha256,
  type ImageConfig,
  type Manifest,
  type OciArchive,
} from './oci-archive.js';
import { Containerd } from './containerd.js';

const MINOR = process.env['KUBEMIX_IMAGES_MINOR'] ?? '1.36';
const skip = process.env['KUBEMIX_E2E'] === '1' ? false : 'the VM tier runs with npm run test:e2e (KUBEMIX_E2E=1)';
/** The release the recipe builds (gobuild/images-<minor>/release). */
const KUBE_VERSION =
  /^KUBERNETES_VERSION=(\S+)$/m.exec(readFileSync(repoPath(`gobuild/images-${MINOR}/release`), 'utf8'))?.[1] ?? '';
const log = (line: string): void => void process.stderr.write(`# built-images: ${line}\n`);

interface Entry {
  readonly kind: 'image' | 'release';
  readonly name: string;
  readonly file: string;
  readonly sha256: string;
  readonly detail: string;
}

function readManifest(dir: string, file = 'MANIFEST'): Entry[] {
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [kind, name, f, sum, detail] = l.split(' ');
      return { kind: kind as Entry['kind'], name: name ?? '', file: f ?? '', sha256: sum ?? '', detail: detail ?? '' };
    });
}

const run = (cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): string =>
  execFileSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

/** What each image must hold beyond its entrypoint, and run as. */
const EXPECT: Readonly<Record<string, { files: readonly string[]; user?: string }>> = {
  'kube-proxy': { files: ['usr/sbin/iptables', 'usr/sbin/ip6tables', 'usr/sbin/nft', 'usr/sbin/conntrack'] },
  etcd: { files: ['usr/local/bin/etcdctl'] },
  'coredns/coredns': { files: ['etc/ssl/certs/ca-certificates.crt'], user: '65532:65532' },
  pause: { files: [], user: '65535:65535' },
  'flannel-io/flannel': { files: ['bin/cp', 'usr/sbin/iptables', 'usr/sbin/nft', 'sbin/ip'] },
  'flannel-io/flannel-cni-plugin': { files: ['flannel', 'bin/cp'] },
  'kubemix/kubemix': {
    files: ['opt/kubemix/bin/kubemix.js', 'opt/kubemix/node_modules/yaml/package.json'],
    user: '65532:65532',
  },
};

/** `registry.k8s.io/coredns/coredns:v1.14.2` → `coredns/coredns`. */
const repoOf = (ref: string): string => ref.slice(ref.indexOf('/') + 1, ref.lastIndexOf(':'));

describe(
  `gobuild images-${MINOR}: images and node downloads built here, held against real readers`,
  { skip, timeout: 240 * 60_000 },
  () => {
    const release = kubernetesRelease(MINOR);
    let dir: string;
    let work: string;
    let entries: Entry[];
    let images: Entry[];
    const archives = new Map<string, OciArchive>();
    const manifests = new Map<string, Manifest>();

    before(async () => {
      const started = Date.now();
      const out = execFileSync('bash', [repoPath('gobuild/build.sh'), `images-${MINOR}`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      dir = out.trim().split('\n').pop() ?? '';
      log(`images-${MINOR} in ${dir} (${Math.round((Date.now() - started) / 1000)} s)`);
      work = mkdtempSync(join(tmpdir(), 'kubemix-built-images-'));
      // kubemix's own image from this checkout (dist is built: this test runs from it).
      execFileSync('bash', [repoPath('gobuild/guard-image.sh'), work], { stdio: ['ignore', 'ignore', 'inherit'] });
      entries = [
        ...readManifest(dir),
        ...readManifest(work, 'MANIFEST.guard').map((e) => ({ ...e, file: join(work, e.file) })),
      ];
      images = entries.filter((e) => e.kind === 'image');
      for (const e of images) {
        const a = await readArchive(e.file.startsWith('/') ? e.file : join(dir, e.file));
        archives.set(e.name, a);
        const m = a.index.manifests[0];
        if (m !== undefined) manifests.set(e.name, JSON.parse(a.blob(m.digest).toString('utf8')) as Manifest);
      }
    });
    after(() => {
      if (work !== undefined) rmSync(work, { recursive: true, force: true });
    });

    it("holds exactly the images kubeadm lists for the release, flannel's, the sandbox pause and kubemix's", () => {
      assert.ok(release);
      const kubeadm = join(dir, 'release', 'kubeadm');
      const version = run(kubeadm, ['version', '-o', 'short']).trim();
      const listed = run(kubeadm, ['config', 'images', 'list', '--kubernetes-version', version])
        .split('\n')
        .filter((l) => l !== '');
      const want = new Set([
        ...listed,
        `${IMAGES.flannel.repository}:${IMAGES.flannel.tag}`,
        `${IMAGES.flannelCniPlugin.repository}:${IMAGES.flannelCniPlugin.tag}`,
        `${IMAGES.pause.repository}:${IMAGES.pause.tag}`,
        `ghcr.io/kubemix/kubemix:${VERSION}`,
      ]);
      assert.deepEqual(new Set(images.map((e) => e.name)), want);
      assert.ok(listed.includes(`registry.k8s.io/etcd:${release.kubeadmImages.etcd}`), listed.join(' '));
    });

    it('writes each image as an OCI image layout whose blobs match their digests', async () => {
      for (const e of images) {
        const a = archives.get(e.name);
        assert.ok(a, e.name);
        const archiveFile = e.file.startsWith('/') ? e.file : join(dir, e.file);
        assert.equal(
          `sha256:${e.sha256}`,
          sha256(readFileSync(archiveFile)),
          `${e.name}: MANIFEST's sha256 of ${e.file}`,
        );
        assert.deepEqual(JSON.parse(a.files.get('oci-layout')?.toString('utf8') ?? '{}'), {
          imageLayoutVersion: '1.0.0',
        });
        const names = a.headers.map((h) => h.name);
        assert.deepEqual(names, [...names].sort(), `${e.name}: entries sorted`);
        for (const [path, data] of a.files) {
          if (path.startsWith('blobs/sha256/'))
            assert.equal(sha256(data), `sha256:${basename(path)}`, `${e.name}: ${path}`);
        }
        assert.equal(a.index.manifests.length, 1);
        const d = a.index.manifests[0];
        assert.ok(d);
        assert.equal(d.mediaType, OCI_MANIFEST);
        assert.equal(d.digest, e.detail, `${e.name}: MANIFEST's digest`);
        assert.equal(d.annotations?.['io.containerd.image.name'], e.name);
        assert.equal(d.annotations?.['org.opencontainers.image.ref.name'], e.name.slice(e.name.lastIndexOf(':') + 1));
        assert.deepEqual(d.platform, { os: 'linux', architecture: 'amd64' });
        const m = manifests.get(e.name);
        assert.ok(m);
        const config = JSON.parse(a.blob(m.config.digest).toString('utf8')) as ImageConfig;
        assert.equal(config.os, 'linux');
        assert.equal(config.architecture, 'amd64');
        assert.equal(config.rootfs.diff_ids.length, m.layers.length);
        for (const [i, l] of m.layers.entries()) {
          assert.equal(l.mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
          const blob = a.blob(l.digest);
          assert.equal(blob.length, l.size);
          const { gunzipSync } = await import('node:zlib');
          assert.equal(sha256(gunzipSync(blob)), config.rootfs.diff_ids[i], `${e.name}: layer ${i} diff_id`);
        }
        await checkContents(e.name, a, m, config);
      }
    });

    async function checkContents(ref: string, a: OciArchive, m: Manifest, config: ImageConfig): Promise<void> {
      const repo = repoOf(ref);
      const short = repo.startsWith('kube-') && repo !== 'kube-proxy' ? 'kube-control-plane' : repo;
      const expect = EXPECT[short] ?? { files: [] };
      assert.equal(config.config.User ?? '', expect.user ?? '', `${ref}: user`);
      const entrypoint = config.config.Entrypoint?.[0];
      const want = [...expect.files, ...(entrypoint === undefined ? [] : [entrypoint.slice(1)])];
      assert.ok(want.length > 0, `${ref}: nothing to look for`);
      for (const path of want) {
        const hit = await fileInImage(a, m, path);
        assert.ok(hit, `${ref}: no /${path}`);
        assert.ok(
          hit.header.type === 'symlink' || ((hit.header.mode ?? 0) & 0o111) !== 0 || !path.includes('bin/'),
          `${ref}: /${path} not executable`,
        );
      }
      // Every entry 0:0 but the non-root home; every mtime the image's creation time.
      const created = new Date(config.created).getTime();
      for (const l of m.layers) {
        for (const { header } of await layerEntries(a.blob(l.digest))) {
          if (header.name !== 'home/nonroot/')
            assert.deepEqual([header.uid, header.gid], [0, 0], `${ref}: ${header.name} owner`);
          assert.equal(header.mtime?.getTime(), created, `${ref}: ${header.name} mtime`);
        }
      }
      if (repo === 'coredns/coredns') {
        const coredns = await fileInImage(a, m, 'coredns');
        // setcap cap_net_bind_service=+ep, as CoreDNS' own image: it binds :53 as 65532.
        const pax = coredns?.header.pax as Record<string, string> | undefined;
        assert.ok(pax?.['SCHILY.xattr.security.capability'] !== undefined, 'coredns file capability');
      }
    }

    it('puts the node downloads at their upstream paths, with checksum files kubemix reads', () => {
      const containerd = CONTAINERD.find((c) => c.line === DEFAULT_CONTAINERD_LINE)?.patch ?? '';
      for (const d of linuxDownloads(containerd, COMPONENTS.runc, COMPONENTS.cniPlugins)) {
        const local = (url: string): string => join(dir, 'mirror', url.replace(/^https:\/\//, ''));
        assert.ok(existsSync(local(d.url)), `${d.id}: ${d.url} not in mirror/`);
        assert.equal(d.checksum.kind, 'sidecar');
        if (d.checksum.kind !== 'sidecar') continue;
        const text = readFileSync(local(d.checksum.url), 'utf8');
        const want = sha256(readFileSync(local(d.url))).slice('sha256:'.length);
        assert.equal(publishedHash(text, basename(d.url)), want, `${d.id}: ${d.checksum.url}`);
      }
      for (const e of entries.filter((x) => x.kind === 'release')) {
        assert.equal(sha256(readFileSync(join(dir, e.file))), `sha256:${e.sha256}`, e.file);
        assert.ok(existsSync(join(dir, 'mirror', e.detail.replace(/^https:\/\//, ''))), e.detail);
      }
      for (const f of ['kubeadm', 'kubelet', 'kubectl']) {
        const text = readFileSync(join(dir, 'release', `${f}.sha256`), 'utf8');
        assert.equal(publishedHash(text, f), sha256(readFileSync(join(dir, 'release', f))).slice(7), `${f}.sha256`);
      }
    });

    it('ships binaries that report the versions kubemix checks for', () => {
      const bin = join(work, 'bin');
      mkdirSync(bin, { recursive: true });
      const containerd = CONTAINERD.find((c) => c.line === DEFAULT_CONTAINERD_LINE)?.patch ?? '';
      const rel = (f: string): string => join(dir, 'release', f);
      // The node install tasks' own commands and checks (src/plan/tasks/containerd.ts).
      run('tar', ['-C', bin, '-xzf', rel(`containerd-${containerd}-linux-amd64.tar.gz`), 'bin/']);
      assert.match(run(join(bin, 'bin', 'containerd'), ['--version']), new RegExp(` v${containerd} `));
      assert.match(run(join(bin, 'bin', 'ctr'), ['--version']), new RegExp(`v${containerd}`));
      assert.match(run(join(bin, 'bin', 'containerd-shim-runc-v2'), ['-v']), new RegExp(`v${containerd}`));
      const runc = run(rel('runc.amd64'), ['--version']);
      assert.match(runc, new RegExp(`^runc version ${COMPONENTS.runc}$`, 'm'));
      assert.match(runc, /^libseccomp: 2\.\d+\.\d+$/m, 'runc linked with libseccomp');
      const cni = join(bin, 'cni');
      mkdirSync(cni);
      run('tar', ['-C', cni, '-xzf', rel(`cni-plugins-linux-amd64-v${COMPONENTS.cniPlugins}.tgz`)]);
      for (const p of ['bridge', 'host-local', 'loopback', 'portmap', 'bandwidth', 'firewall', 'tuning']) {
        const r = spawnSync(join(cni, p), [], { encoding: 'utf8' });
        assert.match(`${r.stdout}${r.stderr}`, new RegExp(`v${COMPONENTS.cniPlugins}`), `${p} version`);
      }
      const crictl = readdirSync(join(dir, 'release')).find((f) => /^crictl-v[\d.]+-linux-amd64\.tar\.gz$/.test(f));
      assert.ok(crictl);
      run('tar', ['-C', bin, '-xzf', rel(crictl), 'crictl']);
      assert.match(run(join(bin, 'crictl'), ['--version']), new RegExp(`crictl version ${crictl.split('-')[1]}`));
      const kubeVersion = KUBE_VERSION;
      assert.equal(run(rel('kubeadm'), ['version', '-o', 'short']).trim(), kubeVersion);
      assert.match(run(rel('kubelet'), ['--version']), new RegExp(`^Kubernetes ${kubeVersion}$`, 'm'));
      assert.match(run(rel('kubectl'), ['version', '--client']), new RegExp(`Client Version: ${kubeVersion}`));
    });

    it('packs programs that run: etcd, CoreDNS, flanneld, the flannel CNI plugin and the control plane', async () => {
      const bin = join(work, 'from-images');
      mkdirSync(bin, { recursive: true });
      const extract = async (name: string, path: string): Promise<string> => {
        const ref = images.find((e) => repoOf(e.name) === name)?.name ?? '';
        const a = archives.get(ref);
        const m = manifests.get(ref);
        assert.ok(a && m, name);
        const hit = await fileInImage(a, m, path);
        assert.ok(hit, `${name}: /${path}`);
        const file = join(bin, basename(path));
        writeFileSync(file, hit.data);
        chmodSync(file, 0o755);
        return file;
      };
      assert.ok(release);
      assert.match(
        run(await extract('etcd', 'usr/local/bin/etcd'), ['--version']),
        new RegExp(`etcd Version: ${release.kubeadmImages.etcd.replace(/-\d+$/, '')}`),
      );
      assert.match(run(await extract('etcd', 'usr/local/bin/etcdctl'), ['version']), /etcdctl version: 3\./);
      assert.match(
        run(await extract('coredns/coredns', 'coredns'), ['-version']),
        new RegExp(`CoreDNS-${release.kubeadmImages.coredns.slice(1)}`),
      );
      // flanneld prints its version on stderr.
      const flanneld = spawnSync(await extract('flannel-io/flannel', 'opt/bin/flanneld'), ['--version'], {
        encoding: 'utf8',
      });
      assert.match(`${flanneld.stdout}${flanneld.stderr}`, new RegExp(`^${IMAGES.flannel.tag}$`, 'm'));
      const flannelCni = spawnSync(await extract('flannel-io/flannel-cni-plugin', 'flannel'), [], { encoding: 'utf8' });
      assert.match(`${flannelCni.stdout}${flannelCni.stderr}`, /CNI flannel plugin v0\.9\.1/);
      const kubeVersion = KUBE_VERSION;
      for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'])
        assert.match(
          run(await extract(c, `usr/local/bin/${c}`), ['--version']),
          new RegExp(`Kubernetes ${kubeVersion}`),
        );
    });

    it('pause, as PID 1, reaps an orphan and exits 0 on SIGTERM', async () => {
      const ref = `${IMAGES.pause.repository}:${IMAGES.pause.tag}`;
      const a = archives.get(ref);
      const m = manifests.get(ref);
      assert.ok(a && m);
      const file = join(work, 'pause');
      writeFileSync(file, (await fileInImage(a, m, 'pause'))?.data ?? Buffer.alloc(0));
      chmodSync(file, 0o755);
      assert.match(run(file, ['-v']), /^pause \(kubemix\) /);
      const r = await reapsAndStops(file);
      assert.equal(r.zombies, 0, 'the orphan was reaped');
      assert.equal(r.exit, 0, `exit status after SIGTERM (stderr: ${r.stderr})`);
      assert.match(r.stderr, /Shutting down, got signal: terminated/i);
      // The check can fail: sleep as PID 1 reaps nothing, and the orphan stays a zombie.
      const control = await reapsAndStops('/bin/sleep', ['1000']);
      assert.equal(control.zombies, 1, 'a PID 1 that does not reap leaves the zombie the check looks for');
    });

    it("is taken by Debian's docker-registry blob by blob, which serves the same manifests back", async (t) => {
      const regDir = join(work, 'registry');
      mkdirSync(join(regDir, 'storage'), { recursive: true });
      const registry: RunningRegistry = await startRegistry(
        regDir,
        'r',
        join(regDir, 'storage'),
        undefined,
        { kind: 'none' },
        '',
      );
      t.after(() => registry.stop());
      const target: Target = { host: registry.host, ca: undefined };
      for (const e of images) {
        const a = archives.get(e.name);
        const m = manifests.get(e.name);
        assert.ok(a && m);
        const repo = repoOf(e.name);
        for (const d of [m.config, ...m.layers])
          assert.equal((await pushBlob(target, repo, a.blob(d.digest))).digest, d.digest);
        const tag = e.name.slice(e.name.lastIndexOf(':') + 1);
        const bytes = a.blob(e.detail);
        const put = await call(
          'PUT',
          `http://${registry.host}/v2/${repo}/manifests/${tag}`,
          target,
          { 'content-type': OCI_MANIFEST },
          bytes,
        );
        assert.equal(put.status, 201, `${e.name}: ${put.body}`);
        const got = await call('GET', `http://${registry.host}/v2/${repo}/manifests/${tag}`, target, {
          accept: OCI_MANIFEST,
        });
        assert.equal(got.status, 200);
        assert.equal(sha256(Buffer.from(got.body, 'utf8')), e.detail, `${e.name}: manifest pulled back`);
      }
    });

    it('is imported by the containerd built here, whose runc runs containers from the images', async (t) => {
      const bin = join(work, 'bin', 'bin');
      const containerd = await Containerd.start(join(work, 'containerd'), bin, join(dir, 'release', 'runc.amd64'));
      t.after(() => containerd.stop());
      for (const e of images) containerd.importArchive(e.file.startsWith('/') ? e.file : join(dir, e.file));
      const listed = containerd.images();
      for (const e of images) assert.equal(listed.get(e.name), e.detail, `${e.name} imported with its digest`);
      // Containers: a PID 1 that stops on SIGTERM; iptables (nf_tables) in kube-proxy's image; CoreDNS
      // binding :53 as 65532 through its file capability; kubemix's CLI on its Node.js.
      const pause = await containerd.runUntilSignalled(`${IMAGES.pause.repository}:${IMAGES.pause.tag}`, 'SIGTERM');
      assert.equal(pause, 0, 'pause exit status after SIGTERM');
      const kubeProxy = images.find((e) => repoOf(e.name) === 'kube-proxy')?.name ?? '';
      assert.match(containerd.run(kubeProxy, ['iptables', '--version']), /iptables v1\.8\.\d+ \(nf_tables\)/);
      assert.match(containerd.run(kubeProxy, ['conntrack', '--version']), /conntrack v1\.4/);
      const coredns = images.find((e) => repoOf(e.name) === 'coredns/coredns')?.name ?? '';
      const corefile = join(work, 'Corefile');
      writeFileSync(corefile, '.:53 {\n  whoami\n}\n');
      // As kubeadm's Deployment runs it: every capability dropped but NET_BIND_SERVICE, the image's user.
      const others = [
        'CHOWN',
        'DAC_OVERRIDE',
        'FSETID',
        'FOWNER',
        'MKNOD',
        'NET_RAW',
        'SETGID',
        'SETUID',
        'SETFCAP',
        'SETPCAP',
        'SYS_CHROOT',
        'KILL',
        'AUDIT_WRITE',
      ];
      const command = ['/coredns', '-conf', '/Corefile'];
      const served = await containerd.runBriefly(
        coredns,
        command,
        corefile,
        '/Corefile',
        others.map((c) => `CAP_${c}`),
      );
      assert.match(served, /\.:53/);
      assert.doesNotMatch(served, /permission denied/);
      // The check can fail, and the capability is in the file: with NET_BIND_SERVICE out of the bounding set
      // the kernel refuses to exec a binary whose +ep file capability it cannot grant (cap_bprm_creds_from_file).
      const refused = await containerd.runBriefly(coredns, command, corefile, '/Corefile', ['CAP_NET_BIND_SERVICE']);
      assert.match(refused, /exec \/coredns: operation not permitted/);
      assert.doesNotMatch(refused, /\.:53/);
      assert.match(
        containerd.run(`ghcr.io/kubemix/kubemix:${VERSION}`, [
          '/usr/local/bin/node',
          '/opt/kubemix/bin/kubemix.js',
          '--version',
        ]),
        new RegExp(VERSION.replace(/\./g, '\\.')),
      );
    });
  },
);

/**
 * PROGRAM as PID 1 of a new PID namespace; an orphan made inside it (a shell
 * that backgrounds `sleep 0.2` and exits) is reparented to PROGRAM. After the
 * orphan has ended: how many zombies PROGRAM holds; then SIGTERM, and its exit.
 */
async function reapsAndStops(
  program: string,
  args: readonly string[] = [],
): Promise<{ zombies: number; exit: number | null; stderr: string }> {
  const child = spawn('unshare', ['--pid', '--fork', '--kill-child', program, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const pid1 = await waitFor(() => childOf(child.pid ?? 0));
    spawnSync('nsenter', ['--target', String(pid1), '--pid', '--', 'sh', '-c', 'sleep 0.2 & exit 0']);
    await new Promise((r) => setTimeout(r, 1500));
    const zombies = childrenOf(pid1).filter((p) => stateOf(p) === 'Z').length;
    process.kill(pid1, 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    const exit = await exited;
    clearTimeout(timer);
    return { zombies, exit, stderr };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function childrenOf(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}
const childOf = (pid: number): number | undefined => childrenOf(pid)[0];
const stateOf = (pid: number): string => /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';

async function waitFor<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
