// The recipe's ordering rules are checked when the plan is made: a step that
// reads an earlier step's result fails the plan if it is moved before it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_WINDOWS_OPTIONS,
  assertNeedsEarlier,
  windowsRecipe,
  type WindowsStep,
} from '../../src/plan/tasks/windows-recipe.js';
import { renderWindowsNode } from '../../src/render/windows/index.js';
import { modelFor } from './fixtures.js';

function recipe(): WindowsStep[] {
  const model = modelFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' });
  const node = model.nodes.find((n) => n.name === 'win-01');
  assert.ok(node);
  return windowsRecipe(model, node, renderWindowsNode(model, node), DEFAULT_WINDOWS_OPTIONS, { join: ['j'] });
}

describe('Windows recipe ordering rules', () => {
  it('the recipe as planned satisfies every need; the join waits for its external tasks, nothing waits for a minted token', () => {
    const steps = recipe();
    assert.doesNotThrow(() => assertNeedsEarlier(steps));
    assert.deepEqual(steps.find((s) => s.name === 'win-kube-proxy-pod')?.needs, ['win-cni-config']);
    assert.deepEqual(steps.find((s) => s.name === 'win-flannel-pod')?.needs, [
      'win-kubeadm-join',
      'win-hostprocess-files',
    ]);
    assert.deepEqual(steps.find((s) => s.name === 'win-kubeadm-join')?.after, ['j']);
    assert.deepEqual(
      steps.filter((s) => s.name !== 'win-kubeadm-join' && (s.after ?? []).length > 0).map((s) => s.name),
      [],
    );
  });
  it('moving the kube-proxy wait before the CNI config, or the pod files after the join, or dropping the join, fails', () => {
    const steps = recipe();
    const proxy = steps.findIndex((s) => s.name === 'win-kube-proxy-pod');
    const moved = [steps[proxy], ...steps.filter((_, i) => i !== proxy)].filter((s) => s !== undefined);
    assert.throws(() => assertNeedsEarlier(moved), /win-kube-proxy-pod needs win-cni-config, which runs after it/);
    const files = steps.findIndex((s) => s.name === 'win-hostprocess-files');
    const late = [...steps.filter((_, i) => i !== files), steps[files]].filter((s) => s !== undefined);
    assert.throws(() => assertNeedsEarlier(late), /win-flannel-pod needs win-hostprocess-files, which runs after it/);
    const join = steps.findIndex((s) => s.name === 'win-kubeadm-join');
    assert.throws(
      () => assertNeedsEarlier(steps.filter((_, i) => i !== join)),
      /needs win-kubeadm-join, which is not in the recipe/,
    );
  });
});
