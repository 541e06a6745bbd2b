// firewalld is on by default on CentOS Stream and Fedora, and Debian or Ubuntu
// hosts may run it too: wherever it runs, open what each role serves (kubeadm's
// port list), the vxlan port (and Calico's Typha), and trust the pod network so
// forwarded pod traffic is not dropped between interfaces. Where it does not
// run, the check passes and nothing changes.
import { CALICO } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { sh, task } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import type { Task } from '../types.js';
import { shell, shellLines, type ShellText } from '../../util/escape/index.js';

const NODE_PORTS = ['10250/tcp', '10256/tcp', '30000-32767/tcp'];
const CONTROL_PLANE_PORTS = ['6443/tcp', '2379-2380/tcp', '10257/tcp', '10259/tcp'];

export function firewallPorts(model: ClusterModel, node: PlanNode): string[] {
  const vxlan = model.overlay.vxlan;
  const overlay = vxlan === undefined ? [] : [`${vxlan.port}/udp`];
  // calico-node talks to Typha, which the operator may place on any node.
  const typha = model.overlay.plugin === 'calico' ? [`${CALICO.typhaPort}/tcp`] : [];
  return [...(node.role === 'control-plane' ? CONTROL_PLANE_PORTS : []), ...NODE_PORTS, ...overlay, ...typha].sort();
}

export function firewallTask(model: ClusterModel, node: PlanNode): Task {
  const ports = firewallPorts(model, node);
  const pods = model.podNetworks.all;
  // A stopped firewalld needs nothing; one that runs must list every opening.
  const check = shell`systemctl is-active --quiet firewalld || exit 0
open=" $(firewall-cmd --permanent --list-ports) "
${shellLines(ports.map((p) => listed('open', p)))}
trusted=" $(firewall-cmd --permanent --zone=trusted --list-sources) "
${shellLines(pods.map((c) => listed('trusted', c)))}`;
  // One firewall-cmd per zone: each call starts a Python interpreter.
  const apply = shell`set -eu
firewall-cmd --quiet --permanent ${ports.map((p) => `--add-port=${p}`)}
firewall-cmd --quiet --permanent --zone=trusted ${pods.map((s) => `--add-source=${s}`)}
firewall-cmd --quiet --reload`;
  return task({
    stage: 'task-prepare-cluster',
    host: node.name,
    name: 'firewall',
    description: `open ${ports.join(', ')} in firewalld; trust the pod network`,
    check: sh(check),
    apply: sh(apply),
    timeoutSeconds: 60,
  });
}

/** Exits 1 unless the space-separated list in $variable holds item. */
function listed(variable: string, item: string): ShellText {
  return shell`case "$${variable}" in *" ${item} "*) ;; *) exit 1 ;; esac`;
}
