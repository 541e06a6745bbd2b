// task-run-validations on a hypervisor: stop before anything is created when
// it cannot carry its guests (Kubeinit's preflight: hypervisor RAM and disk
// ≥ 1.1 × what its guests need), and CPUs: no guest gets more vCPUs than
// the hypervisor has CPUs online (each vCPU is a host thread: a guest
// wider than its host spins on its own locks), and all guests together get
// at most 16 vCPUs per host CPU (OpenStack nova's long-standing default
// cpu_allocation_ratio). Every comparison must *succeed* for the
// check to pass: `[ a -ge b ] || fail`. A value that is not a number makes
// `[` exit 2, which then fails the check instead of skipping an `if`.
import { shell } from '../../util/escape/index.js';
import { factsRef, sh } from '../task.js';
import type { DriverModel, DriverTask } from '../types.js';
import { cleanupRef } from './cleanup.js';
import { LIBVIRT_IMAGES } from './names.js';

/** Headroom Kubeinit asks of a hypervisor over the sum of its guests. */
export const HYPERVISOR_HEADROOM = 1.1;
/** vCPUs all guests may get per host CPU (nova's cpu_allocation_ratio default). */
export const VCPU_OVERCOMMIT = 16;

export function capacityTasks(model: DriverModel): DriverTask[] {
  return model.hypervisors.map((hv) => {
    const guests = model.nodes.filter((n) => n.hypervisor === hv.name);
    const ram = Math.ceil(HYPERVISOR_HEADROOM * guests.reduce((sum, n) => sum + (n.resources?.ramMiB ?? 0), 0));
    const disk = Math.ceil(HYPERVISOR_HEADROOM * guests.reduce((sum, n) => sum + (n.resources?.diskGiB ?? 0), 0));
    const vcpus = guests.reduce((sum, n) => sum + (n.resources?.vcpus ?? 0), 0);
    const widest = guests.reduce((max, n) => Math.max(max, n.resources?.vcpus ?? 0), 0);
    const wide = guests.filter((n) => (n.resources?.vcpus ?? 0) === widest).map((n) => n.name);
    // The schema bounds every size; a sum past exact integers would print as 1e+21 and break `[`.
    if (![ram, disk, vcpus].every(Number.isSafeInteger))
      throw new Error(`${hv.name}: guest sizes ${ram} MiB / ${disk} GiB are not exact integers`);
    const names = guests.map((g) => g.name).join(', ') || 'none';
    const script = shell`need_ram=${ram}
need_disk=${disk}
need_vcpus=${vcpus}
widest=${widest}
have_ram=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
dir=${LIBVIRT_IMAGES}; [ -d "$dir" ] || dir=/
have_disk=$(df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1048576) }')
have_cpus=$(getconf _NPROCESSORS_ONLN)
ok=0
[ "$have_ram" -ge "$need_ram" ] || { echo "${hv.name}: $have_ram MiB RAM, its ${guests.length} guests need $need_ram MiB (${HYPERVISOR_HEADROOM} x their total)" >&2; ok=1; }
[ "$have_disk" -ge "$need_disk" ] || { echo "${hv.name}: $have_disk GiB free in $dir, its guests need $need_disk GiB (${HYPERVISOR_HEADROOM} x their total)" >&2; ok=1; }
[ "$have_cpus" -ge "$widest" ] || { echo "${hv.name}: $have_cpus CPUs online, ${wide.join(', ')} would get $widest vCPUs: more than the host has" >&2; ok=1; }
[ "$((have_cpus * ${VCPU_OVERCOMMIT}))" -ge "$need_vcpus" ] || { echo "${hv.name}: its guests get $need_vcpus vCPUs, more than ${VCPU_OVERCOMMIT} per CPU of its $have_cpus" >&2; ok=1; }
[ "$ok" -eq 0 ] || echo "${hv.name} guests: ${names}; move some with spec.nodes.placement or a group's hypervisor" >&2
exit $ok
`;
    return {
      stage: 'task-run-validations',
      host: hv.name,
      name: 'capacity',
      description: `check RAM ≥ ${ram} MiB, disk ≥ ${disk} GiB and CPUs ≥ ${widest} (${vcpus} vCPUs in all) for ${names === 'none' ? 'no guests' : names}`,
      // After cleanup: the disk that leftovers held counts as free.
      after: [factsRef(hv.name), cleanupRef(hv.name)],
      check: null,
      apply: sh(script, 'user'),
      timeoutSeconds: 60,
    };
  });
}
