// `kubemix down` on a libvirt cluster: every domain, pool volume (disks,
// seed and install media) and network marked for this cluster goes, by the
// same marking contract as task-cleanup-hypervisors with nothing expected;
// then the cluster's storage pool once it holds nothing else, and the
// uploaded definitions (seeds hold host keys), and the VXLAN link and
// bridge of the mesh between hypervisors (named by the cluster's hash: no
// other cluster's) with the boot unit that made them again (only when its
// first line is kubemix's marker for this cluster). The image cache stays for the
// next cluster. A second run finds nothing and changes nothing.
import { shell, shellCode } from '../../util/escape/index.js';
import { sh } from '../task.js';
import type { DriverModel, DriverTask } from '../types.js';
import { APPLY, CLEANUP_STAGE, LIBRARY, preamble } from './cleanup.js';
import { definitionsDir } from './layout.js';
import { clusterIdentity } from './names.js';
import { overlayLinks, overlayUnitMarker, overlayUnitName, UNIT_DIR } from './render/overlay.js';

export const DOWN_TASK = 'remove-cluster';

export function downTasks(model: DriverModel): DriverTask[] {
  const cluster = clusterIdentity(model.cluster);
  return model.hypervisors.map((hv) => {
    const { bridge, vxlan } = overlayLinks(model);
    const head = shell`${preamble(hv.libvirtUri, cluster, { domains: [], networks: [], volumes: [] })}dir=${definitionsDir(model)}
links=${`${vxlan}\n${bridge}`}
units=${UNIT_DIR}
unit=${overlayUnitName(model)}
marker=${overlayUnitMarker(model)}
`;
    return {
      stage: CLEANUP_STAGE,
      host: hv.name,
      name: DOWN_TASK,
      description: `destroy and undefine ${cluster}'s domains, delete its volumes, pool, network, overlay links and definitions`,
      after: [],
      check: sh(shell`${head}${LIBRARY}${REST}${CHECK}`),
      apply: sh(shell`${head}${LIBRARY}${REST}${APPLY}${APPLY_REST}`),
      timeoutSeconds: 600,
    };
  });
}

// The pool is the cluster's by its contract name; it goes only when empty
// (a volume not named by the contract keeps it, and is reported).
const REST = shellCode(`pool_volumes() { v vol-list --pool "$pool" | awk '{ print $1 }'; }
pool_removable() {
  v pool-info --pool "$pool" >/dev/null 2>&1 || return 1
  [ "$(v pool-info --pool "$pool" | sed -n 's/^State: *//p')" = running ] || return 0
  v pool-refresh --pool "$pool" >/dev/null 2>&1 || true
  [ -z "$(pool_volumes)" ]
}
# The gateway's bridge is libvirt's and goes with its network; the others' and
# every VXLAN link are kubemix's own.
present_links() { for l in $links; do if ip link show "$l" >/dev/null 2>&1; then echo "$l"; fi; done; }
# The boot unit of the mesh: ours only when it starts with our marker line.
unit_ours() { [ -f "$units/$unit" ] && [ "$(head -n 1 "$units/$unit")" = "$marker" ]; }
# Its link in multi-user.target.wants/: ours beside our unit, or left dangling when the unit went.
unit_link_ours() {
  [ "$(readlink "$units/multi-user.target.wants/$unit" 2>/dev/null)" = "$units/$unit" ] &&
    { unit_ours || [ ! -e "$units/$unit" ]; }
}
rest() {
  if unit_ours || unit_link_ours; then echo "boot unit $units/$unit"; fi
  if pool_removable; then echo "pool $pool"; fi
  if [ -e "$dir" ]; then echo "definitions $dir"; fi
  for l in $(present_links); do echo "link $l"; done
}
`);

const CHECK = shellCode(`found=$(leftovers) || exit 2
found=$(printf '%s\\n%s\\n' "$found" "$(rest)" | sed '/^$/d')
if [ -n "$found" ]; then printf '%s\\n' "$found" | sed 's/^/present /'; exit 1; fi
echo "nothing of $cluster left"
`);

const APPLY_REST = shellCode(`if pool_removable; then
  # pool-list --name pads short names: ask pool-info for the state instead.
  if [ "$(v pool-info --pool "$pool" | sed -n 's/^State: *//p')" = running ]; then v pool-destroy --pool "$pool" >/dev/null || fail "cannot stop pool $pool"; fi
  target=$(v pool-dumpxml --pool "$pool" | sed -n 's|.*<path>\\(.*\\)</path>.*|\\1|p' | head -n 1)
  if [ -n "$target" ] && [ -d "$target" ]; then
    v pool-delete --pool "$pool" >/dev/null || fail "cannot delete the pool directory $target (files not of this cluster in it?)"
  fi
  v pool-undefine --pool "$pool" >/dev/null || fail "cannot undefine pool $pool"
  echo "removed pool $pool"
elif v pool-info --pool "$pool" >/dev/null 2>&1; then
  echo "kept pool $pool: it holds volumes not of this cluster: $(pool_volumes | tr '\\n' ' ')"
fi
if [ -e "$dir" ]; then rm -rf -- "$dir" || fail "cannot remove $dir"; echo "removed definitions $dir"; fi
if unit_link_ours; then rm -f -- "$units/multi-user.target.wants/$unit" || fail "cannot disable $unit"; fi
if unit_ours; then
  rm -f -- "$units/$unit" || fail "cannot remove $units/$unit"
  if [ -d /run/systemd/system ]; then systemctl daemon-reload || fail "systemctl daemon-reload failed"; fi
  echo "removed boot unit $units/$unit"
elif [ -e "$units/$unit" ]; then
  echo "kept $units/$unit: kubemix did not write it"
fi
for l in $(present_links); do ip link del "$l" || fail "cannot remove link $l"; echo "removed link $l"; done
`);
