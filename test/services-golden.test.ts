// The services node's files for Kubeinit's periodic-job shapes, byte for byte.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderServices } from '../src/render/services/index.js';
import { assertArtifactGolden as assertGolden } from './helpers/artifact-golden.js';
import { SHAPES, modelFor } from './helpers/shapes.js';

describe('services golden files', () => {
  for (const shape of SHAPES) {
    it(shape, () => assertGolden(`${shape}/services`, renderServices(modelFor(shape))));
  }

  it('renders the same bytes twice', () => {
    assert.deepEqual(renderServices(modelFor('k8s-libvirt-3-2-1')), renderServices(modelFor('k8s-libvirt-3-2-1')));
  });
});
