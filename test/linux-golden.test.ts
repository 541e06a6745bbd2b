// The Linux nodes' files (host prep, containerd, registry hosts) for
// Kubeinit's periodic-job shapes, byte for byte.
import { describe, it } from 'node:test';
import { containerdContribution } from '../src/plan/tasks/containerd.js';
import { linuxPrepContribution } from '../src/plan/tasks/linux-prep.js';
import { assertGolden } from './helpers/golden.js';
import { SHAPES, modelFor } from './helpers/shapes.js';

describe('Linux node golden files', () => {
  for (const shape of SHAPES) {
    it(shape, () => {
      const model = modelFor(shape);
      assertGolden(`${shape}/linux`, [...linuxPrepContribution(model).artifacts, ...containerdContribution(model).artifacts]);
    });
  }
});
