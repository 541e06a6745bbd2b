import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lintClusterFor } from './cluster.js';
import { analysePlacement, toleratesTaint } from './placement.js';

const container = { containers: [{ name: 'a', image: 'x' }] };

test('each way of placing a pod is read', () => {
  assert.equal(analysePlacement({ ...container, os: { name: 'windows' } }, undefined).os, 'windows');
  assert.equal(
    analysePlacement({ ...container, nodeSelector: { 'kubernetes.io/os': 'linux' } }, undefined).os,
    'linux',
  );
  assert.equal(
    analysePlacement({ ...container, nodeSelector: { 'beta.kubernetes.io/os': 'windows' } }, undefined).os,
    'windows',
  );
  assert.equal(
    analysePlacement({ ...container, nodeSelector: { 'node.kubernetes.io/windows-build': '10.0.20348' } }, undefined)
      .os,
    'windows',
  );
  const affinity = (op: string, values: string[]) => ({
    ...container,
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: op, values }] }],
        },
      },
    },
  });
  assert.equal(analysePlacement(affinity('In', ['windows']), undefined).os, 'windows');
  assert.equal(analysePlacement(affinity('NotIn', ['windows']), undefined).os, 'linux');
  assert.equal(analysePlacement(affinity('In', ['linux', 'windows']), undefined).os, undefined);
  const none = analysePlacement(container, undefined);
  assert.equal(none.placed, false);
  assert.equal(none.os, undefined);
});

test('RuntimeClass: the cluster decides; without one a windows-looking name counts', () => {
  const spec = { ...container, runtimeClassName: 'windows-2025' };
  const cluster = lintClusterFor(['windows-2022', 'windows-2025']);
  const withCluster = analysePlacement(spec, cluster);
  assert.equal(withCluster.os, 'windows');
  assert.equal(withCluster.runtimeClassBuild, cluster.windows[1]?.build);
  assert.equal(analysePlacement(spec, undefined).os, 'windows');
  const gvisor = analysePlacement({ ...container, runtimeClassName: 'gvisor' }, cluster);
  assert.equal(gvisor.os, undefined);
  assert.equal(gvisor.placed, true);
});

test('spec.os.name names the OS but is not placement: the scheduler does not read it', () => {
  const p = analysePlacement({ ...container, os: { name: 'linux' }, tolerations: [{ operator: 'Exists' }] }, undefined);
  assert.equal(p.os, 'linux');
  assert.equal(p.osName, 'linux');
  assert.equal(p.placed, false);
  assert.equal(
    analysePlacement({ ...container, os: { name: 'linux' }, nodeSelector: { 'kubernetes.io/os': 'linux' } }, undefined)
      .placed,
    true,
  );
});

test('disagreeing placement is a conflict', () => {
  const p = analysePlacement(
    { ...container, os: { name: 'windows' }, nodeSelector: { 'kubernetes.io/os': 'linux' } },
    undefined,
  );
  assert.equal(p.conflict, true);
  assert.equal(p.os, undefined);
});

test('tolerations are matched like the scheduler does', () => {
  const tol = (t: Record<string, string>) => ({ tolerations: [t] });
  assert.ok(toleratesTaint(tol({ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' })));
  assert.ok(toleratesTaint(tol({ key: 'os', value: 'windows' })));
  assert.ok(toleratesTaint(tol({ key: 'os', operator: 'Exists' })));
  assert.ok(toleratesTaint(tol({ operator: 'Exists' })));
  assert.ok(!toleratesTaint(tol({ key: 'os', value: 'linux' })));
  assert.ok(!toleratesTaint(tol({ key: 'os', operator: 'Exists', effect: 'NoExecute' })));
  assert.ok(!toleratesTaint(tol({ key: 'node.kubernetes.io/not-ready', operator: 'Exists' })));
  assert.ok(!toleratesTaint({}));
});
