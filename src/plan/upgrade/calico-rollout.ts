// After `upgrade` re-applies the Tigera operator and the Installation, the
// operator rolls calico-node (and, with Windows workers, the HostProcess
// DaemonSet calico-node-windows) out at its own Calico version by itself,
// some time later. The roll of the workers must not start before that: a
// Windows node restarted under an old calico-node-windows would be judged
// by the wrong pod. The operator writes the Installation's
// `status.calicoVersion` (its components.CalicoRelease, `v3.32.2`) only once
// its status manager reports every component available (tigera/operator,
// pkg/controller/installation/core_controller.go), so this waits for that
// value, then for each DaemonSet's rollout and TigeraStatus `calico`
// Available. Pure.
import { CALICO } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { CALICO_NAMESPACE, CALICO_WINDOWS_DAEMONSET } from '../../render/manifests/calico.js';
import { sh, task } from '../task.js';
import type { Task } from '../types.js';
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';

const KUBECTL = shellCode('kubectl --kubeconfig=/etc/kubernetes/admin.conf');
/** How long the operator gets to roll Calico out on every node. */
export const CALICO_ROLLOUT_SECONDS = 900;

function daemonSets(model: ClusterModel): string[] {
  const windows = model.nodes.some((n) => n.osFamily === 'windows');
  return ['calico-node', ...(windows ? [CALICO_WINDOWS_DAEMONSET] : [])];
}

export function calicoRolloutTask(model: ClusterModel, host: string): Task {
  const version = `v${CALICO.version}`;
  const running = shell`"$(${KUBECTL} get installation default -o jsonpath='{.status.calicoVersion}')" = '${version}'`;
  const rollouts = (t: number): ShellText =>
    shellLines([
      ...daemonSets(model).map(
        (ds) => shell`${KUBECTL} -n ${CALICO_NAMESPACE} rollout status ${`daemonset/${ds}`} --timeout=${t}s`,
      ),
      shell`${KUBECTL} wait --for=condition=Available --timeout=${t}s tigerastatus/calico`,
    ]);
  const seconds = CALICO_ROLLOUT_SECONDS;
  const apply = shell`set -eu
i=0
until [ ${running} ]; do
  i=$((i + 1))
  if [ "$i" -gt ${seconds / 5} ]; then
    echo 'the Tigera operator did not report Calico ${version} running within ${seconds} s:' >&2
    ${KUBECTL} get tigerastatus >&2 || true
    ${KUBECTL} -n ${CALICO_NAMESPACE} get pods -o wide >&2 || true
    exit 1
  fi
  sleep 5
done
${rollouts(seconds)}`;
  return task({
    stage: 'task-deploy-cluster',
    host,
    name: 'upgrade-calico-rollout',
    description: `wait until the operator runs Calico ${version}: ${daemonSets(model).join(' and ')} rolled out on every node`,
    check: sh(shell`set -eu\n[ ${running} ]\n{\n${rollouts(10)}\n} >/dev/null`),
    apply: sh(apply),
    timeoutSeconds: seconds * 2 + 120,
  });
}
