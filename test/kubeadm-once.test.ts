// kubeadm init and join run once, and an interrupted run of kubemix's is
// finished by the next (src/plan/tasks/kubeadm-once.ts): the planned check and
// apply scripts run for real with this machine's sh, against stand-in
// kubeadm, kubectl and systemctl that record their calls and play the node's
// state, with /etc/kubernetes and /etc/kubemix moved under a scratch folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { initScripts, joinScripts } from '../src/plan/tasks/kubeadm-once.js';
import { shellCode, type ShellText } from '../src/util/escape/index.js';

const root = mkdtempSync(join(tmpdir(), 'kubemix-kubeadm-once-'));
const bin = join(root, 'bin');
const calls = join(root, 'calls');

/** Stand-ins: kubeadm init/join write what kubeadm writes (and fail when $FAIL names them); reset removes it. */
const STUBS: Record<string, string> = {
  kubeadm: `echo "kubeadm $*" >> "$CALLS"
case "$1" in
  init) [ "\${FAIL:-}" != init ] || exit 1
        mkdir -p "$R/etc/kubernetes/manifests"; : > "$R/etc/kubernetes/manifests/kube-apiserver.yaml"; : > "$R/etc/kubernetes/admin.conf"; : > "$R/api-up" ;;
  join) [ "\${FAIL:-}" != join ] || exit 1
        mkdir -p "$R/etc/kubernetes"; : > "$R/etc/kubernetes/kubelet.conf"; : > "$R/kubelet-up" ;;
  reset) rm -rf "$R/etc/kubernetes" "$R/api-up" "$R/kubelet-up" ;;
esac`,
  kubectl: `echo "kubectl $*" >> "$CALLS"; [ -e "$R/api-up" ]`,
  systemctl: `echo "systemctl $*" >> "$CALLS"
case "$1" in
  is-active) [ -e "$R/kubelet-up" ] ;;
  start) : > "$R/kubelet-up" ;;
esac`,
  sleep: 'echo "sleep $*" >> "$CALLS"; [ -e "$R/wake-up" ] && : > "$R/api-up"; true',
};

/** The script with the node's absolute paths moved under the scratch root. */
function local(script: string): string {
  return script
    .replaceAll('/etc/kubernetes', `${root}/etc/kubernetes`)
    .replaceAll('/etc/kubemix', `${root}/etc/kubemix`);
}

function run(script: ShellText, env: Record<string, string> = {}): { code: number | null; stderr: string } {
  const r = spawnSync('sh', ['-c', local(script.text)], {
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, CALLS: calls, R: root, ...env },
    timeout: 30_000,
  });
  return { code: r.status, stderr: r.stderr };
}

const called = (): string[] => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);
const marker = (name: string): boolean => existsSync(join(root, 'etc/kubemix/kubeadm', name));

describe('kubeadm init and join run once; an interrupted run of kubemix’s is reset and finished', () => {
  const init = initScripts(shellCode('kubeadm init --config=/etc/kubemix/kubeadm/init.yaml --upload-certs'));
  const joinNode = joinScripts(shellCode('kubeadm join --config=/etc/kubemix/kubeadm/join.yaml'));

  beforeEach(() => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(bin, { recursive: true });
    mkdirSync(join(root, 'etc/kubemix/kubeadm'), { recursive: true });
    for (const [name, body] of Object.entries(STUBS)) {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    }
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a fresh node: the check fails, the apply inits and marks it; then the check passes', () => {
    assert.notEqual(run(init.check).code, 0);
    assert.equal(run(init.apply).code, 0);
    assert.ok(marker('init.started') && marker('init.done'));
    assert.equal(run(init.check).code, 0);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      ['kubeadm init --config=' + `${root}/etc/kubemix/kubeadm/init.yaml --upload-certs`],
    );
  });

  it('an init interrupted after it started (files left, no done): the check fails, the apply resets, then inits', () => {
    assert.notEqual(run(init.apply, { FAIL: 'init' }).code, 0, 'the first init fails midway');
    // kubeadm left its files, and even an API server that answers: still not done.
    mkdirSync(join(root, 'etc/kubernetes/manifests'), { recursive: true });
    writeFileSync(join(root, 'etc/kubernetes/manifests/kube-apiserver.yaml'), '');
    writeFileSync(join(root, 'etc/kubernetes/admin.conf'), '');
    writeFileSync(join(root, 'api-up'), '');
    assert.ok(marker('init.started') && !marker('init.done'));
    assert.notEqual(run(init.check).code, 0, 'started without done is never up to date');
    writeFileSync(calls, '');
    const r = run(init.apply);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /interrupted here: kubeadm reset, then init again/);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      [
        'kubeadm reset --force --cri-socket=unix:///run/containerd/containerd.sock',
        `kubeadm init --config=${root}/etc/kubemix/kubeadm/init.yaml --upload-certs`,
      ],
    );
    assert.ok(marker('init.done'));
  });

  it('a control plane kubemix did not initialise is refused, not reset', () => {
    mkdirSync(join(root, 'etc/kubernetes/manifests'), { recursive: true });
    writeFileSync(join(root, 'etc/kubernetes/manifests/kube-apiserver.yaml'), '');
    const r = run(init.apply);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /kubeadm files kubemix did not write .* will not replace them/);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      [],
    );
    assert.ok(!marker('init.started'));
  });

  it('a finished init whose API server is down is waited for, never initialised again', () => {
    assert.equal(run(init.apply).code, 0);
    rmSync(join(root, 'api-up'));
    writeFileSync(join(root, 'wake-up'), '');
    writeFileSync(calls, '');
    assert.notEqual(run(init.check).code, 0);
    assert.equal(run(init.apply).code, 0);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      [],
    );
    assert.ok(called().some((c) => c.startsWith('sleep')));
  });

  it('a cluster of an earlier kubemix (no markers) is up to date when its API server answers', () => {
    mkdirSync(join(root, 'etc/kubernetes'), { recursive: true });
    writeFileSync(join(root, 'etc/kubernetes/admin.conf'), '');
    writeFileSync(join(root, 'api-up'), '');
    assert.equal(run(init.check).code, 0);
  });

  it('a join interrupted after the kubelet got its credentials is reset and joined again', () => {
    // kubemix killed after kubeadm wrote kubelet.conf and started the kubelet, before it finished.
    writeFileSync(join(root, 'etc/kubemix/kubeadm/join.started'), '');
    mkdirSync(join(root, 'etc/kubernetes'), { recursive: true });
    writeFileSync(join(root, 'etc/kubernetes/kubelet.conf'), '');
    writeFileSync(join(root, 'kubelet-up'), '');
    assert.notEqual(run(joinNode.check).code, 0, 'kubelet.conf and a running kubelet are not a finished join');
    const r = run(joinNode.apply);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      [
        'kubeadm reset --force --cri-socket=unix:///run/containerd/containerd.sock',
        `kubeadm join --config=${root}/etc/kubemix/kubeadm/join.yaml`,
      ],
    );
    assert.equal(run(joinNode.check).code, 0);
  });

  it('a finished join whose kubelet stopped: the kubelet is started, nothing joined again', () => {
    assert.equal(run(joinNode.apply).code, 0);
    rmSync(join(root, 'kubelet-up'));
    assert.notEqual(run(joinNode.check).code, 0);
    writeFileSync(calls, '');
    assert.equal(run(joinNode.apply).code, 0);
    assert.deepEqual(
      called().filter((c) => !c.startsWith('sleep')),
      ['systemctl is-active --quiet kubelet', 'systemctl start kubelet', 'systemctl is-active --quiet kubelet'],
    );
  });

  it('a node joined by someone else is refused', () => {
    mkdirSync(join(root, 'etc/kubernetes'), { recursive: true });
    writeFileSync(join(root, 'etc/kubernetes/bootstrap-kubelet.conf'), '');
    const r = run(joinNode.apply);
    assert.equal(r.code, 1);
    assert.deepEqual(
      called().filter((c) => c.startsWith('kubeadm')),
      [],
    );
  });
});
