// The plan `kubemix down` runs: every node back to a host without the
// cluster, and the services node's daemons stopped and their kubemix files
// removed. Packages stay installed (a later `up` reuses them); the state
// directory keeps its secrets (the cluster CA), so a re-deploy adopts the same
// CA. A driver that created the machines removes them instead. Pure, like
// every plan.
import type { ClusterModel } from '../model/resolve.js';
import { WIN } from '../render/windows/paths.js';
import { renderWindowsNode } from '../render/windows/index.js';
import { assemblePlan, type AssembledPlan } from './assemble.js';
import { sh, task, taskId } from './task.js';
import { driverFor } from '../drivers/index.js';
import { driverDownContribution } from './tasks/driver.js';
import { linuxNodes } from './tasks/linux-prep.js';
import { servicesContribution } from './tasks/services.js';
import { windowsResetTasks, windowsWorkers } from './tasks/windows.js';
import type { PlanNode } from '../model/types.js';
import type { Task } from './types.js';
import type { RenderedArtifact } from '../render/types.js';
import { shell, shellCode } from '../util/escape/index.js';

const STAGE = 'task-cleanup-hypervisors';
/** Interfaces flannel and Calico leave behind on Linux nodes. */
const CNI_LINKS = ['flannel.4096', 'cni0', 'vxlan.calico'];
/** The services node's daemons, by the Debian unit names the services tasks enable. */
const SERVICE_UNITS = ['haproxy', 'named', 'dnsmasq', 'docker-registry', 'kubemix-files'];

export function assembleResetPlan(model: ClusterModel): AssembledPlan {
  // Machines the driver created are removed whole: resetting them first would be wasted work.
  if (driverFor(model.cluster.driver).createsMachines) return assemblePlan(model, [driverDownContribution]);
  return assemblePlan(model, [windowsReset, linuxReset, servicesReset, driverDownContribution]);
}

function windowsReset(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const artifacts = windowsWorkers(model).flatMap((n) =>
    renderWindowsNode(model, n).filter((a) => a.remotePath === WIN.resetScript),
  );
  return { tasks: windowsResetTasks(model), artifacts };
}

/** Workers first, controllers last; the first controller also waits for the Windows Node deletions it runs. */
function linuxReset(model: ClusterModel): { tasks: Task[] } {
  const nodes = linuxNodes(model);
  const workers = nodes.filter((n) => n.role === 'worker');
  const windowsDeletes = windowsResetTasks(model)
    .filter((t) => t.name.startsWith('delete-node-'))
    .map((t) => t.id);
  const tasks = nodes.map((n) =>
    linuxResetTask(
      n,
      n.role === 'worker' ? [] : [...workers.map((w) => taskId(STAGE, w.name, 'node-reset')), ...windowsDeletes],
    ),
  );
  return { tasks };
}

function linuxResetTask(node: PlanNode, after: readonly string[]): Task {
  return task({
    stage: STAGE,
    host: node.name,
    name: 'node-reset',
    description: `kubeadm reset ${node.name}, remove CNI state and kubemix files`,
    after,
    check: sh(
      shellCode(
        '[ ! -e /etc/kubernetes/kubelet.conf ] && [ ! -e /etc/kubernetes/admin.conf ] && [ ! -d /etc/kubemix ]',
      ),
    ),
    apply: sh(shell`set -eu
if command -v kubeadm >/dev/null 2>&1; then kubeadm reset --force; fi
systemctl stop kubelet 2>/dev/null || true
rm -rf /etc/cni/net.d/* /var/lib/cni /etc/kubemix
for link in ${CNI_LINKS}; do ip link delete "$link" 2>/dev/null || true; done`),
    timeoutSeconds: 600,
  });
}

function servicesReset(model: ClusterModel): { tasks: Task[] } {
  const { tasks: upTasks, artifacts } = servicesContribution(model);
  const host = upTasks[0]?.host;
  if (host === undefined) return { tasks: [] };
  const files = [...new Set(artifacts.filter((a) => a.node === host).map((a) => a.remotePath))].sort();
  return {
    tasks: [
      task({
        stage: STAGE,
        host,
        name: 'services-reset',
        description: `stop ${SERVICE_UNITS.join(', ')} and remove the files kubemix wrote`,
        check: sh(
          shell`for u in ${SERVICE_UNITS}; do ! systemctl is-active --quiet "$u" || exit 1; done\nfor f in ${files}; do [ ! -e "$f" ] || exit 1; done`,
        ),
        apply: sh(
          shell`for u in ${SERVICE_UNITS}; do systemctl disable --now "$u" 2>/dev/null || true; done\nrm -f ${files}`,
        ),
        timeoutSeconds: 300,
      }),
    ],
  };
}
