// `down` gives back what `up` replaced (issue #31: it deleted the packages'
// /etc/bind/named.conf and /etc/haproxy/haproxy.cfg). The upload script and
// the services reset's scripts run here for real, in a temporary directory
// standing in for the node's /etc and /var/lib/kubemix/originals: the scripts
// take the records' directory as a parameter and the file paths are the
// temporary ones. That the planned services-reset task is made of the same
// scripts (with the real paths) is asserted on the plan.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  existsSync,
  mkdtempSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { uploadScript } from '../src/transport/scripts.js';
import { originalsRestoredScript, restoreOriginalsScript, ORIGINALS_DIR } from '../src/util/originals.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { resolveModel } from '../src/model/resolve.js';
import { assembleResetPlan } from '../src/plan/reset.js';
import { nodeRestoreScript } from '../src/plan/node-restore.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';

let root: string;
let originals: string;
const at = (path: string): string => join(root, path);

/** Uploads `content` to `path` (under the stand-in root) as the SSH transport does as root: with a record. */
function upload(path: string, content: string, mode = '0644'): void {
  const script = uploadScript('sh', at(path), mode, '', { originals });
  const r = spawnSync('sh', ['-c', `umask 077\n${script}`], { input: content, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

function sh(script: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function packageFile(path: string, content: string, mode: number): void {
  mkdirSync(dirname(at(path)), { recursive: true });
  writeFileSync(at(path), content);
  chmodSync(at(path), mode);
}

beforeEach(() => {
  // Not named for kubemix: a path naming kubemix is kubemix's namespace (inKubemixNamespace).
  root = mkdtempSync(join(tmpdir(), 'node-root-'));
  originals = at('var/lib/kubemix/originals');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('uploads record what they replace', () => {
  it('keeps the package file byte for byte with its mode, in a 0700 directory whose parent stays 0755', () => {
    const original = 'options { directory "/var/cache/bind"; };\n\u00e9\0binary\n';
    packageFile('etc/bind/named.conf', original, 0o640);
    upload('etc/bind/named.conf', 'kubemix named.conf\n');
    assert.equal(readFileSync(at('etc/bind/named.conf'), 'utf8'), 'kubemix named.conf\n');
    const saved = join(originals, 'saved', at('etc/bind/named.conf'));
    assert.equal(readFileSync(saved, 'utf8'), original);
    assert.equal(statSync(saved).mode & 0o777, 0o640);
    assert.equal(statSync(originals).mode & 0o777, 0o700);
    // The services node's download cache lives beside it and is read by nginx.
    assert.equal(statSync(dirname(originals)).mode & 0o777, 0o755);
  });

  it('a second upload keeps the first record: the original, not kubemix’s first version', () => {
    packageFile('etc/haproxy/haproxy.cfg', 'package haproxy.cfg\n', 0o644);
    upload('etc/haproxy/haproxy.cfg', 'kubemix v1\n');
    upload('etc/haproxy/haproxy.cfg', 'kubemix v2\n');
    assert.equal(
      readFileSync(join(originals, 'saved', at('etc/haproxy/haproxy.cfg')), 'utf8'),
      'package haproxy.cfg\n',
    );
    assert.equal(existsSync(join(originals, 'created', at('etc/haproxy/haproxy.cfg'))), false);
  });

  it('a secret it replaces stays 0600 in the record', () => {
    packageFile('etc/docker/registry/config.yml', 'secret: old\n', 0o600);
    upload('etc/docker/registry/config.yml', 'secret: new\n', '0640');
    assert.equal(statSync(join(originals, 'saved', at('etc/docker/registry/config.yml'))).mode & 0o777, 0o600);
  });

  it('a path that did not exist is recorded as created, and stays so after a later upload', () => {
    upload('etc/haproxy/haproxy.cfg', 'kubemix v1\n');
    upload('etc/haproxy/haproxy.cfg', 'kubemix v2\n');
    assert.ok(existsSync(join(originals, 'created', at('etc/haproxy/haproxy.cfg'))));
    assert.equal(existsSync(join(originals, 'saved', at('etc/haproxy/haproxy.cfg'))), false);
  });
});

describe('down restores, removes only what kubemix created, leaves what it has no record of', () => {
  const files = (): string[] =>
    [
      'etc/bind/named.conf',
      'etc/haproxy/haproxy.cfg',
      'etc/docker/registry/config.yml',
      'etc/resolv.conf',
      'etc/bind/kubemix/db.lab',
    ].map(at);
  const restore = () => sh(restoreOriginalsScript(files(), originals).text);
  const restored = () => sh(originalsRestoredScript(files(), originals).text).status === 0;

  it('gives each file back as it was; the check fails before and passes after, as the executor expects', () => {
    packageFile('etc/bind/named.conf', 'package named.conf\n', 0o640);
    upload('etc/bind/named.conf', 'kubemix named.conf\n');
    upload('etc/haproxy/haproxy.cfg', 'kubemix haproxy.cfg\n');
    packageFile('etc/docker/registry/config.yml', 'a file kubemix never recorded\n', 0o644);
    mkdirSync(at('etc'), { recursive: true });
    symlinkSync('../run/systemd/resolve/stub-resolv.conf', at('etc/resolv.conf'));
    upload('etc/resolv.conf', 'nameserver 192.0.2.53\n');
    // A kubemix-namespace file from a deploy before records existed.
    packageFile('etc/bind/kubemix/db.lab', 'zone\n', 0o644);
    assert.equal(restored(), false);

    const r = restore();
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(at('etc/bind/named.conf'), 'utf8'), 'package named.conf\n');
    assert.equal(statSync(at('etc/bind/named.conf')).mode & 0o777, 0o640);
    assert.equal(existsSync(at('etc/haproxy/haproxy.cfg')), false, 'created by kubemix: removed');
    assert.equal(readFileSync(at('etc/docker/registry/config.yml'), 'utf8'), 'a file kubemix never recorded\n');
    assert.match(r.stderr, /left .*etc\/docker\/registry\/config\.yml in place: kubemix has no record/);
    assert.ok(lstatSync(at('etc/resolv.conf')).isSymbolicLink(), 'a replaced symlink comes back as a symlink');
    assert.equal(readlinkSync(at('etc/resolv.conf')), '../run/systemd/resolve/stub-resolv.conf');
    assert.equal(existsSync(at('etc/bind/kubemix/db.lab')), false, 'kubemix namespace: removed');
    assert.match(r.stdout, /restored .*named\.conf/);
    assert.match(r.stdout, /removed .*haproxy\.cfg: kubemix created it/);
    assert.equal(restored(), true);

    // Run again (a resumed down): nothing more changes, the package file stays.
    assert.equal(restore().status, 0);
    assert.equal(readFileSync(at('etc/bind/named.conf'), 'utf8'), 'package named.conf\n');
  });

  it('up, down, up, down: each down gives back the package file, not kubemix’s version', () => {
    packageFile('etc/bind/named.conf', 'package named.conf\n', 0o644);
    upload('etc/bind/named.conf', 'kubemix 1\n');
    assert.equal(restore().status, 0);
    upload('etc/bind/named.conf', 'kubemix 2\n');
    assert.equal(restore().status, 0);
    assert.equal(readFileSync(at('etc/bind/named.conf'), 'utf8'), 'package named.conf\n');
  });
});

describe('the planned services reset is made of these scripts', () => {
  it('restores the services node’s uploads with the node’s records directory', () => {
    const text = readFileSync(repoPath('examples', 'existing-host-gw.yaml'), 'utf8');
    const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }));
    const reset = assembleResetPlan(model).plan.tasks.find(
      (t) => t.id === 'task-cleanup-hypervisors/svc1/services-reset',
    );
    const up = assemblePlan(model).plan;
    const files = [...new Set(up.artifacts.filter((a) => a.node === 'svc1').map((a) => a.remotePath))].sort();
    assert.ok(files.includes('/etc/bind/named.conf') && files.includes('/etc/haproxy/haproxy.cfg'));
    assert.ok(reset?.apply.script.includes(restoreOriginalsScript(files, ORIGINALS_DIR).text), 'apply');
    assert.ok(reset?.check?.script.includes(originalsRestoredScript(files, ORIGINALS_DIR).text), 'check');
    assert.doesNotMatch(reset?.apply.script ?? '', /rm -f \/etc\/bind\/named\.conf/);
  });
});

describe('a Linux node’s reset gives back containerd’s and the kubelet’s files', () => {
  const paths = [
    'etc/containerd/config.toml',
    'etc/containerd/certs.d/registry.lab:5000/hosts.toml',
    'etc/systemd/system/containerd.service',
    'etc/systemd/system/kubelet.service',
    'etc/systemd/system/kubelet.service.d/10-kubeadm.conf',
    'etc/sysctl.d/90-kubemix.conf',
  ];
  /** systemctl stand-in: logs each call; a unit "exists" while its file does under the stand-in root. */
  function stubSystemctl(): string {
    const bin = at('bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'systemctl'),
      `#!/bin/sh\necho "$*" >> "${at('systemctl.log')}"\ncase "$1" in\n  is-enabled) exit 1 ;;\n  cat) [ -e "${at('etc/systemd/system')}/$2" ] ;;\nesac\n`,
      { mode: 0o755 },
    );
    return bin;
  }

  it('restores what the host had, removes what kubemix created, and disables a unit before its file goes', () => {
    packageFile('etc/containerd/config.toml', 'version = 2 # the package’s\n', 0o644);
    packageFile(
      'etc/systemd/system/kubelet.service',
      '[Service]\nExecStart=/usr/bin/kubelet # the operator’s\n',
      0o644,
    );
    for (const p of paths) upload(p, `kubemix ${p}\n`);
    const bin = stubSystemctl();
    const files = paths.map(at);
    const r = spawnSync('sh', ['-c', nodeRestoreScript(files, originals).text], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(at('etc/containerd/config.toml'), 'utf8'), 'version = 2 # the package’s\n');
    assert.match(readFileSync(at('etc/systemd/system/kubelet.service'), 'utf8'), /the operator’s/);
    for (const created of paths.filter((p) => !/config\.toml$|kubelet\.service$/.test(p)))
      assert.equal(existsSync(at(created)), false, `${created}: created by kubemix, removed`);
    const calls = readFileSync(at('systemctl.log'), 'utf8').trim().split('\n');
    // containerd.service was kubemix's: disabled and stopped while its file was there; the
    // operator's kubelet.service is left enabled as it was; containerd re-reads the restored config.
    assert.deepEqual(calls.slice(0, 3), [
      'disable --now containerd.service',
      'daemon-reload',
      'try-restart containerd',
    ]);
    assert.ok(!calls.some((c) => c.includes('disable --now kubelet')), calls.join('\n'));
    assert.match(r.stdout, /kubelet\.service: the unit kubemix replaced is back, disabled/);
    assert.doesNotMatch(r.stdout, /containerd\.service: the unit/);
    assert.equal(sh(originalsRestoredScript(files, originals).text).status, 0);
  });

  it('is the planned node-reset of every Linux node, with that node’s uploads', () => {
    const text = readFileSync(repoPath('examples', 'existing-host-gw.yaml'), 'utf8');
    const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }));
    const up = assemblePlan(model).plan;
    const reset = assembleResetPlan(model).plan.tasks;
    for (const node of ['cp1', 'lin1']) {
      const files = [...new Set(up.artifacts.filter((a) => a.node === node).map((a) => a.remotePath))].sort();
      assert.ok(files.includes('/etc/containerd/config.toml') && files.includes('/etc/systemd/system/kubelet.service'));
      const task = reset.find((t) => t.id === `task-cleanup-hypervisors/${node}/node-reset`);
      assert.ok(task !== undefined, node);
      assert.ok(task.apply.script.includes(nodeRestoreScript(files).text), `${node} apply`);
      assert.ok(task.check?.script.includes(originalsRestoredScript(files).text), `${node} check`);
      assert.ok(
        task.apply.script.indexOf('kubeadm reset') < task.apply.script.indexOf('restore()'),
        'after kubeadm reset',
      );
    }
  });
});
