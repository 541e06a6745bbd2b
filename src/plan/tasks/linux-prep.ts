// task-prepare-cluster on every Linux cluster node: what kubeadm's preflight
// and flannel expect of a host (cgroup v2, no swap, br_netfilter/overlay,
// forwarding sysctls, its planned hostname, /etc/hosts, time sync, firewall).
import { linuxDistro } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import {
  KERNEL_MODULES,
  SYSCTLS,
  SYSCTL_FILE,
  hostsBlock,
  HOSTS_BEGIN,
  HOSTS_END,
  renderModules,
  renderSysctls,
} from '../../render/linux/host.js';
import { sh, task, taskId } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import type { Task } from '../types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { configTask } from './config-files.js';
import { firewallTask } from './linux-firewall.js';
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';

export const PREP_STAGE = 'task-prepare-cluster';

export function linuxNodes(model: ClusterModel): PlanNode[] {
  return model.nodes.filter((n) => n.osFamily === 'linux' && n.role !== 'services');
}

export function linuxPrepContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const tasks: Task[] = [];
  const artifacts: RenderedArtifact[] = [];
  for (const node of linuxNodes(model)) {
    const modules = renderModules(node);
    const sysctls = renderSysctls(node);
    artifacts.push(modules, sysctls);
    const id = (name: string): string => taskId(PREP_STAGE, node.name, name);
    tasks.push(
      cgroupCheck(node),
      swapOff(node),
      configTask({
        stage: PREP_STAGE,
        host: node.name,
        name: 'kernel-modules',
        description: `load ${KERNEL_MODULES.join(', ')} now and at boot`,
        files: [modules],
        live: shellLines(
          KERNEL_MODULES.map((m) => shell`[ -d ${`/sys/module/${m}`} ]`),
          ' && ',
        ),
        validate: shellLines(KERNEL_MODULES.map((m) => shell`modprobe ${m}`)),
      }),
      configTask({
        stage: PREP_STAGE,
        host: node.name,
        name: 'sysctls',
        description: 'bridge netfilter and IPv4 forwarding',
        files: [sysctls],
        after: [id('kernel-modules')],
        live: sysctlLive(),
        validate: shell`sysctl -q -p ${SYSCTL_FILE}`,
      }),
      hostname(node),
      hostsFile(model, node, id('hostname')),
      timeSync(node, linuxDistro(node.os)?.family === 'dnf'),
      firewallTask(model, node),
    );
  }
  return { tasks, artifacts };
}

function sysctlLive(): ShellText {
  return shellLines(
    Object.entries(SYSCTLS).map(([k, v]) => shell`[ "$(sysctl -n ${k})" = ${v} ]`),
    ' && ',
  );
}

/** Read-only: kubelet ≥1.35 refuses cgroup v1 unless failCgroupV1: false (Kubernetes 1.35 release notes). */
function cgroupCheck(node: PlanNode): Task {
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'cgroup-v2',
    description: 'fail early unless the host runs the unified cgroup v2 hierarchy',
    check: null,
    apply: sh(
      shell`fs=$(stat -fc %T /sys/fs/cgroup)\n[ "$fs" = cgroup2fs ] || { echo "${node.name}: /sys/fs/cgroup is $fs; kubelet needs cgroup v2 (boot with systemd.unified_cgroup_hierarchy=1)" >&2; exit 1; }`,
      'user',
    ),
    timeoutSeconds: 30,
  });
}

function swapOff(node: PlanNode): Task {
  // Fedora's swap is zram from zram-generator; an empty override file turns it off.
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'swap-off',
    description: 'turn swap off now and keep it off across reboots',
    check: sh(
      shellCode(`[ -z "$(swapon --noheadings --show)" ] && ! grep -Eq '^[^#]\\S*\\s+\\S+\\s+swap\\s' /etc/fstab`),
    ),
    apply: sh(
      shellCode(`set -eu
swapoff -a
sed -i -E 's|^([^#]\\S*\\s+\\S+\\s+swap\\s)|#\\1|' /etc/fstab
if [ -e /usr/lib/systemd/zram-generator.conf ]; then : > /etc/systemd/zram-generator.conf; fi`),
    ),
    timeoutSeconds: 60,
  });
}

function hostname(node: PlanNode): Task {
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'hostname',
    description: `set the hostname to ${node.name}`,
    check: sh(shell`[ "$(hostname)" = ${node.name} ]`),
    apply: sh(
      shell`hostnamectl set-hostname ${node.name} 2>/dev/null || { echo ${node.name} > /etc/hostname; hostname ${node.name}; }`,
    ),
    timeoutSeconds: 30,
  });
}

function hostsFile(model: ClusterModel, node: PlanNode, after: string): Task {
  const block = hostsBlock(model, node);
  const lines = `/^${HOSTS_BEGIN}$/,/^${HOSTS_END}$/`;
  const current = shell`sed -n ${`${lines}p`} /etc/hosts`;
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'etc-hosts',
    description: 'name this node, the API endpoint and the registry in /etc/hosts',
    after: [after],
    check: sh(shell`[ "$(${current})" = "$(cat <<'KUBEMIX_EOF'\n${block}\nKUBEMIX_EOF\n)" ]`),
    apply: sh(shell`set -eu
tmp=$(mktemp)
sed ${`${lines}d`} /etc/hosts > "$tmp"
cat >> "$tmp" <<'KUBEMIX_EOF'
${block}
KUBEMIX_EOF
cat "$tmp" > /etc/hosts
rm -f "$tmp"`),
    timeoutSeconds: 30,
  });
}

/** Certificates and etcd need agreeing clocks: NTP on, through the distro's default client. */
function timeSync(node: PlanNode, dnf: boolean): Task {
  const install = dnf
    ? shellCode('dnf install -y -q chrony && systemctl enable --now chronyd')
    : shellCode('DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemd-timesyncd');
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'time-sync',
    description: 'keep the clock synchronised (NTP on)',
    check: sh(shellCode('[ "$(timedatectl show --property=NTP --value)" = yes ]')),
    apply: sh(shell`timedatectl set-ntp true 2>/dev/null || { ${install} && timedatectl set-ntp true; }`),
    timeoutSeconds: 300,
  });
}
