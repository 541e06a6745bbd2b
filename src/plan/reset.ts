// The plan `kubemix down` runs: every node back to a host without the
// cluster, and the services node's daemons stopped and the files kubemix
// uploaded there given back as they were (restored, or removed when kubemix
// created them). On existing hosts, only the hosts in the scope the command
// gives (those the deploy journal shows kubemix deployed). Packages stay installed (a later `up` reuses them); the state
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
import { nodeUploads, nodeRestoreScript } from './node-restore.js';
import { servicesContribution } from './tasks/services.js';
import { windowsResetTasks, windowsWorkers } from './tasks/windows.js';
import type { PlanNode } from '../model/types.js';
import type { Task } from './types.js';
import type { RenderedArtifact } from '../render/types.js';
import { shell, shellCode, shellLines } from '../util/escape/index.js';
import { originalsRestoredScript, restoreOriginalsScript } from '../util/originals.js';

const STAGE = 'task-cleanup-hypervisors';
/** Interfaces flannel and Calico leave behind on Linux nodes. */
const CNI_LINKS = ['flannel.4096', 'cni0', 'vxlan.calico'];
/** The services node's daemons, by the Debian unit names the services tasks enable. */
const SERVICE_UNITS = ['haproxy', 'named', 'dnsmasq', 'docker-registry', 'kubemix-files'];

/** Which hosts `down` resets: all of them, or those the deploy journal shows kubemix deployed (cli/commands/down.ts). */
export type ResetScope = (host: string) => boolean;

const EVERY_HOST: ResetScope = () => true;

export function assembleResetPlan(model: ClusterModel, resets: ResetScope = EVERY_HOST): AssembledPlan {
  // Machines the driver created are removed whole: resetting them first would be wasted work.
  if (driverFor(model.cluster.driver).createsMachines) return assemblePlan(model, [driverDownContribution]);
  return assemblePlan(model, [
    (m) => windowsReset(m, resets),
    (m) => linuxReset(m, resets),
    (m) => servicesReset(m, resets),
    driverDownContribution,
  ]);
}

function windowsReset(model: ClusterModel, resets: ResetScope): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const artifacts = windowsWorkers(model)
    .filter((n) => resets(n.name))
    .flatMap((n) => renderWindowsNode(model, n).filter((a) => a.remotePath === WIN.resetScript));
  return { tasks: windowsResetTasks(model, resets), artifacts };
}

/** Workers first, controllers last; the first controller also waits for the Windows Node deletions it runs. */
function linuxReset(model: ClusterModel, resets: ResetScope): { tasks: Task[] } {
  const nodes = linuxNodes(model).filter((n) => resets(n.name));
  const workers = nodes.filter((n) => n.role === 'worker');
  const windowsDeletes = windowsResetTasks(model, resets)
    .filter((t) => t.name.startsWith('delete-node-'))
    .map((t) => t.id);
  const uploads = nodeUploads(model);
  const tasks = nodes.map((n) =>
    linuxResetTask(
      n,
      uploads.get(n.name) ?? [],
      n.role === 'worker' ? [] : [...workers.map((w) => taskId(STAGE, w.name, 'node-reset')), ...windowsDeletes],
    ),
  );
  return { tasks };
}

function linuxResetTask(node: PlanNode, uploads: readonly string[], after: readonly string[]): Task {
  return task({
    stage: STAGE,
    host: node.name,
    name: 'node-reset',
    description: `kubeadm reset ${node.name}, remove CNI state; restore the files kubemix replaced, remove those it created`,
    after,
    check: sh(
      shellLines([
        shellCode(
          '[ ! -e /etc/kubernetes/kubelet.conf ] && [ ! -e /etc/kubernetes/admin.conf ] && [ ! -d /etc/kubemix ] || exit 1',
        ),
        originalsRestoredScript(uploads),
      ]),
    ),
    apply: sh(
      shellLines([
        shell`set -eu
if command -v kubeadm >/dev/null 2>&1; then kubeadm reset --force; fi
systemctl stop kubelet 2>/dev/null || true
rm -rf /etc/cni/net.d/* /var/lib/cni /etc/kubemix
for link in ${CNI_LINKS}; do ip link delete "$link" 2>/dev/null || true; done`,
        nodeRestoreScript(uploads),
      ]),
    ),
    timeoutSeconds: 600,
  });
}

/**
 * The services node's daemons stopped, and each file kubemix uploaded there
 * given back as it was before (util/originals.ts): the package's named.conf
 * and haproxy.cfg restored, kubemix's own files removed, a file with no
 * record left in place and named in the task's output.
 */
function servicesReset(model: ClusterModel, resets: ResetScope): { tasks: Task[] } {
  const { tasks: upTasks, artifacts } = servicesContribution(model);
  const host = upTasks[0]?.host;
  if (host === undefined || !resets(host)) return { tasks: [] };
  const files = [...new Set(artifacts.filter((a) => a.node === host).map((a) => a.remotePath))].sort();
  return {
    tasks: [
      task({
        stage: STAGE,
        host,
        name: 'services-reset',
        description: `stop ${SERVICE_UNITS.join(', ')}; restore the files kubemix replaced, remove those it created`,
        check: sh(
          shellLines([
            shell`for u in ${SERVICE_UNITS}; do ! systemctl is-active --quiet "$u" || exit 1; done`,
            originalsRestoredScript(files),
          ]),
        ),
        apply: sh(
          shellLines([
            shell`for u in ${SERVICE_UNITS}; do systemctl disable --now "$u" 2>/dev/null || true; done`,
            restoreOriginalsScript(files),
          ]),
        ),
        timeoutSeconds: 300,
      }),
    ],
  };
}
