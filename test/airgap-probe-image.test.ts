// `up --probe-image` air-gapped: the air-gap check wants the probe image the
// final verify will pull (the given one), not verify's default (the
// real-cluster tier's third run stopped there: its bundle has its own BusyBox).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { airGapPreflight } from '../src/cli/airgap-preflight.js';
import type { CliIo } from '../src/cli/io.js';
import { InputError } from '../src/errors.js';
import type { Plan } from '../src/plan/types.js';
import { VERIFY_PROBE_IMAGES } from '../src/matrix/index.js';
import { clusterImages, withProbeImages } from '../src/model/images.js';
import { parseProbeImageOverrides } from '../src/verify/cluster/images.js';
import { modelFor } from './helpers/shapes.js';

const PROBE = 'docker.io/kubemix/e2e-busybox:1.35.0';

describe('air-gapped images with --probe-image', () => {
  const images = clusterImages(modelFor('k8s-libvirt-1-1-1'));
  const linux = VERIFY_PROBE_IMAGES['linux'] ?? '';

  it('without it, verify’s default probe is among the images', () => {
    assert.deepEqual(withProbeImages(images, {}), images);
    assert.ok(images.some((i) => i.ref === linux && i.usedBy.includes('verify')));
  });

  it('linux=REF: REF replaces the default, on the same platforms; the rest unchanged', () => {
    const got = withProbeImages(images, parseProbeImageOverrides([`linux=${PROBE}`]));
    assert.ok(!got.some((i) => i.ref === linux), 'the default is no longer needed');
    const probe = got.find((i) => i.ref === PROBE);
    assert.deepEqual(probe, {
      ref: PROBE,
      registry: 'docker.io',
      repository: 'kubemix/e2e-busybox',
      tag: '1.35.0',
      platforms: images.find((i) => i.ref === linux)?.platforms,
      usedBy: ['verify'],
    });
    assert.deepEqual(
      got.filter((i) => i.ref !== PROBE),
      images.filter((i) => i.ref !== linux),
    );
  });

  it('an image verify shares with another user stays for that user', () => {
    const shared = images.map((i) => (i.ref === linux ? { ...i, usedBy: ['other', 'verify'] } : i));
    const got = withProbeImages(shared, { linux: PROBE });
    assert.deepEqual(got.find((i) => i.ref === linux)?.usedBy, ['other']);
    assert.ok(got.some((i) => i.ref === PROBE));
  });
});

describe('up’s air-gap check with --probe-image', () => {
  const linux = VERIFY_PROBE_IMAGES['linux'] ?? '';
  const probeOnly = clusterImages(modelFor('k8s-libvirt-1-1-1')).filter((i) => i.ref === linux);
  const plan = { images: probeOnly, downloads: [] } as unknown as Plan;
  const io = { cwd: '/', signal: new AbortController().signal } as unknown as CliIo;

  it('the given probe, pushed before, is enough; without the flag the default is missing', async () => {
    const state = mkdtempSync(join(tmpdir(), 'kubemix-airgap-probe-'));
    try {
      writeFileSync(join(state, 'images.json'), JSON.stringify({ [PROBE]: `sha256:${'0'.repeat(64)}` }));
      await airGapPreflight(plan, state, { probeImage: [`linux=${PROBE}`] }, io);
      await assert.rejects(
        airGapPreflight(plan, state, {}, io),
        (e: unknown) => e instanceof InputError && e.code === 'airgap.missing' && e.message.includes(linux),
      );
      // The check reads the download cache without making it: a refused `up` leaves the state directory as it was.
      assert.deepEqual(readdirSync(state), ['images.json']);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
