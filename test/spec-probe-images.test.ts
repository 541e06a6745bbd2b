// spec.verify.probeImages: an air-gapped site names the probe images it
// carries, and everything that lists, pushes, checks or runs verify's probes
// follows the spec (the real-cluster tier's run 10 stopped because the
// services registry's check still wanted the matrix's BusyBox, which only the
// `up --probe-image` flag had replaced).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { VERIFY_PROBE_IMAGES } from '../src/matrix/index.js';
import { clusterImages, withProbeImages } from '../src/model/images.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { clusterExpectations } from '../src/verify/cluster/expect.js';
import { REPO } from './helpers/shapes.js';

const OWN = 'registry.example.com/tools/busybox:1.37.0';
const FLAG = 'registry.example.com/tools/busybox:1.36.1';
const DEFAULT = VERIFY_PROBE_IMAGES['linux'] ?? '';

function airGapped(extra: string): ClusterModel {
  const text = readFileSync(join(REPO, 'examples', 'airgap-existing.yaml'), 'utf8').replace(
    /^spec:\n/m,
    `spec:\n${extra}`,
  );
  return resolveModel(readSpec({ kind: 'file', path: 'airgap.yaml', text }));
}

describe('spec.verify.probeImages', () => {
  const own = airGapped(`  verify:\n    probeImages:\n      linux: ${OWN}\n`);

  it('the images list carries the spec’s probe, not the matrix’s', () => {
    const refs = clusterImages(own).map((i) => i.ref);
    assert.ok(refs.includes(OWN));
    assert.ok(!refs.includes(DEFAULT));
  });

  it('the services registry’s check asks for the spec’s probe', () => {
    const task = assemblePlan(own).plan.tasks.find((t) => t.name === 'registry-images');
    const check = JSON.stringify(task?.check);
    assert.ok(check.includes('/v2/registry.example.com/tools/busybox/manifests/1.37.0'), check);
    assert.ok(!check.includes('library/busybox'), check);
  });

  it('verify runs it on the Linux nodes', () => {
    const linux = clusterExpectations(own).nodes.filter((n) => n.os === 'linux');
    assert.ok(linux.length > 0);
    for (const n of linux) assert.equal(n.probeImage, OWN);
  });

  it('without the field, the matrix’s probe as before', () => {
    const model = airGapped('');
    assert.ok(clusterImages(model).some((i) => i.ref === DEFAULT));
    for (const n of clusterExpectations(model).nodes.filter((x) => x.os === 'linux'))
      assert.equal(n.probeImage, DEFAULT);
  });

  it('--probe-image still replaces it for one run (by the probe’s platform, not its default ref)', () => {
    const got = withProbeImages(clusterImages(own), { linux: FLAG });
    const refs = got.map((i) => i.ref);
    assert.ok(refs.includes(FLAG) && !refs.includes(OWN), refs.join('\n'));
    for (const n of clusterExpectations(own, { linux: FLAG }).nodes.filter((x) => x.os === 'linux'))
      assert.equal(n.probeImage, FLAG);
  });
});
