// What the upgrade asks of a node before it moves on, run by bash against
// stand-ins: the wait for the node (src/plan/upgrade/api-steps.ts
// readyScripts) — right after the kubelet's restart the Node still carries
// the old kubelet's status, Ready and the old version, until the new kubelet
// posts its own (the real-cluster tier's run 37 failed the upgrade on that
// stale status, 10 s after the restart) — and whether the kubelet step is
// already done (node-steps.ts linuxKubelet): in the same run its check was
// three lines of which only the last, `systemctl is-active`, decided, so a
// running old kubelet counted as upgraded and was never replaced.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { readyScripts } from '../src/plan/upgrade/api-steps.js';
import { linuxImagePull, linuxKubelet } from '../src/plan/upgrade/node-steps.js';
import { KUBE_BIN_DIR } from '../src/render/linux/kubelet.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('upgrade-ready');
after(() => tmp.remove());

/**
 * A kubectl that notes every read without a time limit (one hanging read
 * would outlast the wait's own deadline) and answers Ready=True and the old kubelet version for the first
 * `staleReads` version reads, the new one after; a sleep that returns at once.
 */
function standIns(dir: string, staleReads: number): void {
  writeFileSync(join(dir, 'reads'), '0');
  writeFileSync(
    join(dir, 'kubectl'),
    `#!/bin/bash
case "$*" in *--request-timeout=*) ;; *) echo "$*" >> ${dir}/unbounded ;; esac
case "$*" in
  *kubeletVersion*)
    n=$(cat ${dir}/reads); echo $((n + 1)) > ${dir}/reads
    if [ "$n" -lt ${staleReads} ]; then printf v1.35.4; else printf v1.36.3; fi ;;
  *Ready*) printf True ;;
  *) exit 3 ;;
esac
`,
  );
  writeFileSync(join(dir, 'sleep'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, 'kubectl'), 0o755);
  chmodSync(join(dir, 'sleep'), 0o755);
}

function run(dir: string, timeoutSeconds: number): { status: number | null; stderr: string; reads: number } {
  const script = readyScripts('Worker-01', '1.36.3', timeoutSeconds).apply;
  const r = spawnSync('bash', ['-c', script.text], {
    env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}` },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr, reads: Number(readFileSync(join(dir, 'reads'), 'utf8')) };
}

describe('the upgrade waits for the node’s new kubelet', () => {
  it('waits out the old kubelet’s status: Ready at once, the target version three reads later', () => {
    const dir = join(tmp.dir, 'later');
    mkdirSync(dir);
    standIns(dir, 3);
    const r = run(dir, 600);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.reads, 4);
  });

  it('bounds every read, so its own deadline holds while the API server does not answer', () => {
    const dir = join(tmp.dir, 'bounded');
    mkdirSync(dir);
    standIns(dir, 1_000_000);
    assert.equal(run(dir, 0).status, 1);
    assert.equal(existsSync(join(dir, 'unbounded')), false, 'a kubectl read without --request-timeout');
  });

  it('gives up after its time, naming what the Node says', () => {
    const dir = join(tmp.dir, 'never');
    mkdirSync(dir);
    standIns(dir, 1_000_000);
    const r = run(dir, 0);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^worker-01 is not Ready with kubelet v1\.36\.3 after 0 s \(Ready: True, kubelet: v1\.35\.4\)$/m,
    );
  });
});

/** Stand-ins for kubelet, kubectl (at `kubeletAt`, `kubectlAt`) and systemctl (the kubelet running). */
function hostStandIns(dir: string, kubeletAt: string, kubectlAt: string): void {
  mkdirSync(dir, { recursive: true });
  const script = (name: string, body: string) => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  script('kubelet', `echo 'Kubernetes v${kubeletAt}'`);
  script('kubectl', `echo 'Client Version: v${kubectlAt}'`);
  script('systemctl', 'exit 0');
}

for (const install of ['binaries', 'packages'] as const)
  describe(`the upgrade’s kubelet step (${install}) is done only when the new kubelet is installed`, () => {
    const path = repoPath('examples', 'calico-libvirt-1-1-1.yaml');
    const doc = parse(readFileSync(path, 'utf8')) as { spec: { kubernetes: Record<string, unknown> } };
    doc.spec.kubernetes['install'] = install;
    const model = resolveModel(readSpec({ kind: 'file', path, text: stringify(doc) }));
    const node =
      model.nodes.find((n) => n.osFamily === 'linux' && n.role === 'worker') ?? assert.fail('no Linux worker');
    const v = model.versions.kubernetes;
    const done = (dir: string): number | null => {
      // The release binaries' absolute paths, pointed at the stand-ins.
      const check = linuxKubelet(model, node).check.text.replaceAll(`${KUBE_BIN_DIR}/`, `${dir}/`);
      return spawnSync('bash', ['-c', check], { env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}` } })
        .status;
    };

    it('an old kubelet that runs is not done', () => {
      const dir = join(tmp.dir, install, 'old-kubelet');
      hostStandIns(dir, '1.0.0', v);
      assert.notEqual(done(dir), 0);
    });

    it('an old kubectl beside the new kubelet is not done', () => {
      const dir = join(tmp.dir, install, 'old-kubectl');
      hostStandIns(dir, v, '1.0.0');
      assert.notEqual(done(dir), 0);
    });

    it('both at the target, the kubelet running: done', () => {
      const dir = join(tmp.dir, install, 'both');
      hostStandIns(dir, v, v);
      assert.equal(done(dir), 0);
    });
  });

describe('a control plane pulls the target’s images before it is cordoned', () => {
  const path = repoPath('examples', 'calico-libvirt-1-1-1.yaml');
  const model = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
  const { check, apply } = linuxImagePull(model);
  /** A crictl that knows the images listed in `have` and pulls any but `broken` into it. */
  const crictl = (dir: string, have: readonly string[], broken = ''): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'have'), have.map((h) => `${h}\n`).join(''));
    writeFileSync(
      join(dir, 'crictl'),
      `#!/bin/sh
case "$1" in
  inspecti) grep -qxF -- "$3" ${dir}/have ;;
  pull) [ "$2" != '${broken}' ] && echo "$2" >> ${dir}/have ;;
  *) exit 3 ;;
esac
`,
    );
    chmodSync(join(dir, 'crictl'), 0o755);
  };
  const sh = (dir: string, script: string): number | null =>
    spawnSync('bash', ['-c', script], { env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}` } }).status;
  const api = `registry.k8s.io/kube-apiserver:v${model.versions.kubernetes}`;

  it('pulls every image kubeadm names; done only when all are there', () => {
    const dir = join(tmp.dir, 'pull-all');
    crictl(dir, []);
    assert.notEqual(sh(dir, check.text), 0);
    assert.equal(sh(dir, apply.text), 0);
    assert.equal(sh(dir, check.text), 0);
    const pulled = readFileSync(join(dir, 'have'), 'utf8');
    assert.ok(pulled.includes(`${api}\n`), pulled);
    assert.equal(pulled.trim().split('\n').length, 7, pulled);
  });

  it('one image missing: not done; a pull that fails fails the step', () => {
    const dir = join(tmp.dir, 'pull-broken');
    crictl(dir, [], api);
    assert.notEqual(sh(dir, apply.text), 0);
    assert.notEqual(sh(dir, check.text), 0);
  });
});
