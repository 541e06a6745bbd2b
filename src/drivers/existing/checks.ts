// task-run-validations on an existing host: it runs the OS the spec names
// and, for a control-plane node, meets kubeadm's own preflight minimums.
import { linuxDistro, windowsRelease } from '../../matrix/index.js';
import { factsRef, powershell, sh } from '../task.js';
import type { DriverModel, DriverNode, DriverTask, TaskRef } from '../types.js';

/** kubeadm's own preflight minimums for a control-plane node. */
export const CONTROL_PLANE_MINIMUM = { cpus: 2, ramMiB: 1700 } as const;

export const HOST_CHECK = 'os-and-size';

export function hostCheckRef(node: string): TaskRef {
  return { stage: 'task-run-validations', host: node, name: HOST_CHECK };
}

export function hostCheckTasks(model: DriverModel): DriverTask[] {
  return model.nodes.map((node) => ({
    stage: 'task-run-validations',
    host: node.name,
    name: HOST_CHECK,
    description: `check the host runs ${node.os}${node.role === 'control-plane' ? ' and meets kubeadm minimums' : ''}`,
    after: [factsRef(node.name)],
    check: null,
    apply: node.osFamily === 'windows' ? powershell(windowsCheck(node)) : sh(linuxCheck(node), 'user'),
    timeoutSeconds: 60,
  }));
}

function linuxCheck(node: DriverNode): string {
  const distro = linuxDistro(node.os);
  const min = node.role === 'control-plane' ? CONTROL_PLANE_MINIMUM : { cpus: 1, ramMiB: 0 };
  return `. /etc/os-release
if [ "$ID" != "${distro?.osRelease.id}" ] || [ "\${VERSION_ID:-}" != "${distro?.osRelease.versionId}" ]; then
  echo "${node.name} runs $ID \${VERSION_ID:-}, the spec says ${node.os}" >&2; exit 1
fi
cpus=$(getconf _NPROCESSORS_ONLN)
ram=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
if [ "$cpus" -ge ${min.cpus} ] && [ "$ram" -ge ${min.ramMiB} ]; then :; else
  echo "${node.name} has $cpus CPUs and $ram MiB RAM; a ${node.role} node needs ${min.cpus} CPUs and ${min.ramMiB} MiB" >&2; exit 1
fi
`;
}

function windowsCheck(node: DriverNode): string {
  const build = windowsRelease(node.os)?.build ?? '';
  return `$os = Get-CimInstance -ClassName Win32_OperatingSystem
if ($os.Version -ne '${build}') {
  throw "${node.name} runs Windows build $($os.Version), the spec says ${node.os} (${build})"
}
`;
}
