import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newShapeErrors, placementShapeErrors } from './fix-check.js';

test('placement fields in their Kubernetes shape pass', () => {
  const spec = {
    os: { name: 'windows' },
    nodeSelector: { 'kubernetes.io/os': 'windows' },
    runtimeClassName: 'windows-2022',
    tolerations: [{ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule', tolerationSeconds: 5 }],
  };
  assert.deepEqual(placementShapeErrors(spec), []);
  assert.deepEqual(placementShapeErrors({ tolerations: null, nodeSelector: null }), []);
});

test('a selector label under os, a wrong type or an unknown toleration field is an error', () => {
  assert.deepEqual(placementShapeErrors({ os: { name: 'linux', 'kubernetes.io/os': 'linux' } }), [
    'os.kubernetes.io/os: not a PodOS field',
  ]);
  assert.deepEqual(placementShapeErrors({ os: 'linux' }), ['os: not a map']);
  assert.deepEqual(placementShapeErrors({ os: { name: 'macos' } }), ['os.name: not linux or windows']);
  assert.deepEqual(placementShapeErrors({ nodeSelector: { a: { b: 'c' } } }), ['nodeSelector.a: not a string']);
  assert.deepEqual(placementShapeErrors({ tolerations: [{ key: 'os', name: 'x' }, 'os'] }), [
    'tolerations[0].name: not a Toleration field',
    'tolerations[1]: not a map',
  ]);
});

test('only errors the fix added count', () => {
  const before = { os: { name: 'linux', extra: 1 } };
  assert.deepEqual(newShapeErrors(before, { os: { name: 'linux', extra: 1 } }), []);
  assert.deepEqual(newShapeErrors(before, { os: { name: 'linux', extra: 1, 'kubernetes.io/os': 'linux' } }), [
    'os.kubernetes.io/os: not a PodOS field',
  ]);
});
