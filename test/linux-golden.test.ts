// The Linux nodes' files (host prep, containerd, registry hosts, package
// repositories, kubeadm configs) and the cluster manifests for
// Kubeinit's periodic-job shapes, byte for byte.
import { describe, it } from 'node:test';
import { containerdContribution } from '../src/plan/tasks/containerd.js';
import { kubeadmContribution } from '../src/plan/tasks/kubeadm.js';
import { kubernetesBinariesContribution } from '../src/plan/tasks/kubernetes-binaries.js';
import { linuxPrepContribution } from '../src/plan/tasks/linux-prep.js';
import { assertArtifactGolden as assertGolden } from './helpers/artifact-golden.js';
import { SHAPES, modelFor } from './helpers/shapes.js';

describe('Linux node golden files', () => {
  for (const shape of SHAPES) {
    it(shape, () => {
      const model = modelFor(shape);
      const parts = [
        linuxPrepContribution,
        containerdContribution,
        kubernetesBinariesContribution,
        kubeadmContribution,
      ];
      assertGolden(
        `${shape}/linux`,
        parts.flatMap((p) => p(model).artifacts),
      );
    });
  }
});
