// The deploy order Kubernetes needs: services up before kubeadm init, the
// CNI after init, control-plane joins after init, workers after the CNI,
// post-deployment checks last; and plans are byte-for-byte reproducible.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../src/util/json.js';
import { planFor } from './helpers/shapes.js';

describe('deploy order (k8s-libvirt-3-2-1)', () => {
  const { plan } = planFor('k8s-libvirt-3-2-1');
  const get = (id: string) => {
    const t = plan.tasks.find((x) => x.id === id);
    assert.ok(t !== undefined, id);
    return t;
  };

  it('kubeadm init waits for host prep and for the services node to serve the API name', () => {
    const init = get('task-deploy-cluster/controller-01/kubeadm-init');
    const needed = [
      'task-create-services/service-01/haproxy',
      'task-create-services/service-01/bind',
      'task-prepare-cluster/controller-01/containerd',
      'task-prepare-cluster/controller-01/kubeadm-binary',
      'task-prepare-cluster/controller-01/kubelet-binary',
      'task-prepare-cluster/controller-01/kubelet-service',
      'task-prepare-cluster/controller-01/swap-off',
    ];
    for (const dep of needed) {
      assert.ok(init.after.includes(dep), dep);
    }
  });

  it('controllers join after init, workers after the CNI, labels after every join', () => {
    assert.ok(
      get('task-deploy-cluster/controller-02/kubeadm-join').after.includes(
        'task-deploy-cluster/controller-01/kubeadm-init',
      ),
    );
    assert.ok(
      get('task-deploy-cluster/compute-02/kubeadm-join').after.includes(
        'task-deploy-cluster/controller-01/cluster-manifests',
      ),
    );
    const label = get('task-post-deployment/controller-01/label-workers');
    assert.deepEqual(label.after.filter((a) => a.endsWith('/kubeadm-join')).length, 4);
    assert.match(label.check?.script ?? '', /grep -cxE 'node\/\(compute-01\|compute-02\)'\)" = 2 \]/);
  });

  it('the same spec plans to the same bytes', () => {
    assert.equal(canonicalJson(planFor('k8s-libvirt-3-2-1').plan), canonicalJson(plan));
  });
});
