// task-run-validations: stop before anything is changed when a host cannot
// carry what the plan puts on it (Kubeinit's preflight: hypervisor RAM and
// disk ≥ 1.1 × what its guests need; OS and size of existing hosts).
// Every comparison is written so that it must *succeed* for the check to
// pass: `[ a -ge b ] || fail`. A value that is not a number makes `[` exit 2,
// which then fails the check instead of skipping an `if [ a -lt b ]`.
import { LIBVIRT_IMAGES } from '../../drivers/libvirt/names.js';
import { linuxDistro, windowsRelease } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { powershell, sh, task, taskId } from '../task.js';
import { CLEANUP_STAGE, CLEANUP_TASK } from './cleanup-hypervisors.js';
import { underlayValidationTasks } from './underlay-validation.js';
import type { Task } from '../types.js';

/** Headroom Kubeinit asks of a hypervisor over the sum of its guests. */
export const HYPERVISOR_HEADROOM = 1.1;
/** kubeadm's own preflight minimums for a control-plane node. */
export const CONTROL_PLANE_MINIMUM = { cpus: 2, ramMiB: 1700 } as const;

export function validationTasks(model: ClusterModel): Task[] {
  return model.cluster.driver === 'libvirt'
    ? hypervisorChecks(model)
    : [...existingNodeChecks(model), ...underlayValidationTasks(model)];
}

function hypervisorChecks(model: ClusterModel): Task[] {
  return model.hypervisors.map((hv) => {
    const guests = model.nodes.filter((n) => n.hypervisor === hv.name);
    const ram = Math.ceil(HYPERVISOR_HEADROOM * guests.reduce((sum, n) => sum + (n.resources?.ramMiB ?? 0), 0));
    const disk = Math.ceil(HYPERVISOR_HEADROOM * guests.reduce((sum, n) => sum + (n.resources?.diskGiB ?? 0), 0));
    // The schema bounds every size; a sum past exact integers would print as 1e+21 and break `[`.
    if (!Number.isSafeInteger(ram) || !Number.isSafeInteger(disk))
      throw new Error(`${hv.name}: guest sizes ${ram} MiB / ${disk} GiB are not exact integers`);
    const names = guests.map((g) => g.name).join(', ') || 'none';
    const script = `need_ram=${ram}
need_disk=${disk}
have_ram=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
dir=${LIBVIRT_IMAGES}; [ -d "$dir" ] || dir=/
have_disk=$(df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1048576) }')
ok=0
[ "$have_ram" -ge "$need_ram" ] || { echo "${hv.name}: $have_ram MiB RAM, its ${guests.length} guests need $need_ram MiB (${HYPERVISOR_HEADROOM} x their total)" >&2; ok=1; }
[ "$have_disk" -ge "$need_disk" ] || { echo "${hv.name}: $have_disk GiB free in $dir, its guests need $need_disk GiB (${HYPERVISOR_HEADROOM} x their total)" >&2; ok=1; }
[ "$ok" -eq 0 ] || echo "${hv.name} guests: ${names}; move some with spec.nodes.placement or a group's hypervisor" >&2
exit $ok
`;
    return task({
      stage: 'task-run-validations',
      host: hv.name,
      name: 'capacity',
      description: `check RAM ≥ ${ram} MiB and disk ≥ ${disk} GiB for ${names === 'none' ? 'no guests' : names}`,
      // After cleanup: the disk that leftovers held counts as free.
      after: [taskId('task-gather-facts', hv.name, 'facts'), taskId(CLEANUP_STAGE, hv.name, CLEANUP_TASK)],
      check: null,
      apply: sh(script, 'user'),
      timeoutSeconds: 60,
    });
  });
}

function existingNodeChecks(model: ClusterModel): Task[] {
  return model.nodes.map((node) =>
    task({
      stage: 'task-run-validations',
      host: node.name,
      name: 'os-and-size',
      description: `check the host runs ${node.os}${node.role === 'control-plane' ? ' and meets kubeadm minimums' : ''}`,
      after: [taskId('task-gather-facts', node.name, 'facts')],
      check: null,
      apply: node.osFamily === 'windows' ? powershell(windowsCheck(node)) : sh(linuxCheck(node), 'user'),
      timeoutSeconds: 60,
    }),
  );
}

function linuxCheck(node: PlanNode): string {
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

function windowsCheck(node: PlanNode): string {
  const build = windowsRelease(node.os)?.build ?? '';
  return `$os = Get-CimInstance -ClassName Win32_OperatingSystem
if ($os.Version -ne '${build}') {
  throw "${node.name} runs Windows build $($os.Version), the spec says ${node.os} (${build})"
}
`;
}
