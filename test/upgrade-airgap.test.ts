// `kubemix upgrade` on an air-gapped cluster: the target release's images
// reach the services registry the way `up`'s did (`--images`, pushed and then
// found there before any node is touched), its binaries the download cache
// (`--downloads`); whatever is missing is named with exit 2 before a host is
// reached (the real-cluster tier's upgrade stopped on `unknown option
// '--downloads'`).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assembleUpgradePlan } from '../src/plan/upgrade/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';

const AIRGAP = readFileSync(repoPath('examples', 'airgap-existing.yaml'), 'utf8');
const AT_135 = AIRGAP.replace('version: "1.36"', 'version: "1.35"');

describe('upgrade, air-gapped: the plan', () => {
  const model = resolveModel(readSpec({ kind: 'file', path: 'airgap.yaml', text: AIRGAP }));
  const { plan } = assembleUpgradePlan(model, { from: '1.35.4', maxUnavailable: 1 });

  it('pushes the target’s images into the services registry and finds them there before the first node', () => {
    const push = plan.tasks.filter((t) => t.pushesImages !== undefined);
    assert.equal(push.length, 1, plan.tasks.map((t) => t.id).join('\n'));
    const preflight = plan.tasks.find((t) => t.name === 'upgrade-preflight');
    assert.deepEqual(preflight?.after, [push[0]?.id]);
    const images = (plan.images ?? []).map((i) => i.ref);
    const v = model.versions.kubernetes;
    assert.ok(
      images.some((r) => r.endsWith(`/kube-apiserver:v${v}`)),
      `the target's kube-apiserver among ${images.join(' ')}`,
    );
  });

  it('every task the plan waits for is in the plan', () => {
    const ids = new Set(plan.tasks.map((t) => t.id));
    for (const t of plan.tasks) for (const a of t.after) assert.ok(ids.has(a), `${t.id} waits for ${a}`);
  });
});

describe('upgrade, air-gapped: the CLI', () => {
  let dir: string;
  let spec: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubemix-upgrade-airgap-'));
    spec = join(dir, 'cluster.yaml');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('without the target’s images or downloads: exit 2 naming them, before any host or state is touched', async () => {
    writeFileSync(spec, AT_135);
    const state = join(dir, 'state');
    const r = await runCli(['upgrade', spec, '--to', '1.36', '--state-dir', state]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /kube-apiserver:v1\.36\.\d+.*in no --images bundle/s);
    assert.match(r.stderr, /\[airgap\.missing\]/);
    assert.ok(!hasStackTrace(r.stderr));
    assert.ok(!existsSync(state), 'the refused upgrade wrote nothing, not even the state directory');
    assert.match(readFileSync(spec, 'utf8'), /version: "1\.35"/);
  });

  it('--downloads and --images are upgrade’s flags too (a bad one is named)', async () => {
    writeFileSync(spec, AT_135);
    const r = await runCli(['upgrade', spec, '--to', '1.36', '--downloads', join(dir, 'nowhere'), '--images', spec]);
    assert.equal(r.code, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /unknown option/);
    assert.ok(!hasStackTrace(r.stderr));
  });
});
