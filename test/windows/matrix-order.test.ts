// Facts from upstream that a plan depends on: kubeadm 1.36 removed the
// v1beta3 config API (kubernetes/kubernetes#136016), and Defender's
// exclusions must be in place before containerd and the downloads write
// large files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KUBERNETES, compareVersions } from '../../src/matrix/index.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { modelFor } from './fixtures.js';

describe('kubeadm config APIs per minor', () => {
  it('v1beta3 only before 1.36; v1beta4 everywhere and preferred', () => {
    for (const k of KUBERNETES) {
      assert.equal(k.kubeadmApis[0], 'v1beta4', k.minor);
      assert.equal(
        k.kubeadmApis.includes('v1beta3'),
        compareVersions(`${k.minor}.0`, '1.36.0') < 0,
        `${k.minor}: v1beta3 was removed in kubeadm 1.36`,
      );
    }
  });
});

describe('Defender exclusions come right after the runtime', () => {
  it('win-defender-exclusions directly follows win-containerd and precedes every download and pull', () => {
    const { plan } = assemblePlan(modelFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' }));
    const win = plan.tasks.filter((t) => t.host === 'win-01');
    const byName = (n: string) => win.find((t) => t.name === n);
    const defender = byName('win-defender-exclusions');
    assert.ok(defender);
    assert.deepEqual(defender.after, [byName('win-containerd')?.id]);
    assert.equal(defender.stage, 'task-prepare-cluster');
    // Beside the exclusions, the binaries wait only for the services node's download cache.
    const others = (byName('win-binaries')?.after ?? []).filter((id) => id !== defender.id);
    assert.ok(byName('win-binaries')?.after.includes(defender.id));
    assert.deepEqual(
      others.map((id) => id.split('/').pop()),
      ['download-cache'],
    );
  });
});
