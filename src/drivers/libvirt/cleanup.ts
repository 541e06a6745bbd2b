// task-cleanup-hypervisors: remove what an earlier, abandoned deployment of
// this cluster left on a hypervisor — and nothing else. A domain or network
// is this cluster's only when its <metadata> mark names the cluster exactly
// (names alone prove nothing: a look-alike the user made stays); a volume
// only when it lies in the cluster's own pool and is named by the contract
// (volumes carry no metadata). Whatever the plan expects on this hypervisor
// stays, so a resumed or re-planned run never removes the VMs an earlier
// pass of the same deployment created: this run only ever creates expected
// names, and cleanup only ever removes unexpected ones.
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import { factsRef, sh } from '../task.js';
import type { DriverModel, DriverTask, TaskRef } from '../types.js';
import {
  clusterIdentity,
  domainName,
  METADATA_CLOSE,
  METADATA_OPEN,
  networkName,
  poolName,
  VOLUME_SUFFIXES,
  volumeNames,
} from './names.js';

export const CLEANUP_STAGE = 'task-cleanup-hypervisors';
export const CLEANUP_TASK = 'leftovers';

/** The cleanup task of one hypervisor, for the tasks that must wait for it. */
export function cleanupRef(hypervisor: string): TaskRef {
  return { stage: CLEANUP_STAGE, host: hypervisor, name: CLEANUP_TASK };
}

/** What the plan expects on one hypervisor: kept whatever their marks say. */
export interface Expected {
  readonly domains: readonly string[];
  readonly networks: readonly string[];
  readonly volumes: readonly string[];
}

export function cleanupTasks(model: DriverModel): DriverTask[] {
  const cluster = clusterIdentity(model.cluster);
  return model.hypervisors.map((hv) => {
    const guests = model.nodes.filter((n) => n.hypervisor === hv.name);
    const expected: Expected = {
      domains: guests.map(domainName).sort(),
      networks: [networkName(cluster)],
      volumes: guests.flatMap(volumeNames).sort(),
    };
    const head = preamble(hv.libvirtUri, cluster, expected);
    return {
      stage: CLEANUP_STAGE,
      host: hv.name,
      name: CLEANUP_TASK,
      description: `remove ${cluster}'s marked domains, networks and pool volumes the plan does not expect here (keeps ${guests.map((g) => g.name).join(', ') || 'no guests'})`,
      after: [factsRef(hv.name)],
      check: sh(shell`${head}${LIBRARY}${CHECK}`),
      apply: sh(shell`${head}${LIBRARY}${APPLY}`),
      timeoutSeconds: 300,
    };
  });
}

/** The names one a line: one shell word (the loops split it on newlines only). */
const list = (names: readonly string[]): string => names.join('\n');

export function preamble(uri: string, cluster: string, expected: Expected): ShellText {
  return shell`uri=${uri}
cluster=${cluster}
pool=${poolName(cluster)}
keep_domains=${list(expected.domains)}
keep_networks=${list(expected.networks)}
keep_volumes=${list(expected.volumes)}
`;
}

const SUFFIXES = Object.values(VOLUME_SUFFIXES);

// Shared by check and apply. Names go through loops one a line with
// globbing off, so no name is split or expanded. The mark's pattern is a
// constant (names.ts), written into sed's program inside "…" (it holds "),
// where the template escapes only what sh would read in it.
export const LIBRARY = shell`set -f
IFS='
'
v() { virsh -q -c "$uri" "$@"; }
fail() { echo "$*" >&2; exit 2; }
kept() { printf '%s\\n' "$2" | grep -Fxq -- "$1"; }
# The cluster a domain or network XML is marked for; empty when unmarked
# or unreadable (a domain that vanished meanwhile): those are kept.
mark() { sed -n "s|.*${METADATA_OPEN}\\([^<]*\\)${METADATA_CLOSE}.*|\\1|p" | head -n 1; }
command -v virsh >/dev/null 2>&1 || fail "virsh not found: install libvirt-clients on this hypervisor"
v uri >/dev/null || fail "cannot connect to libvirt at $uri"

leftover_domains() {
  names=$(v list --all --name) || return 1
  for d in $names; do
    if [ -z "$d" ] || kept "$d" "$keep_domains"; then continue; fi
    if [ "$(v dumpxml --domain "$d" 2>/dev/null | mark)" = "$cluster" ]; then printf '%s\\n' "$d"; fi
  done
}

leftover_networks() {
  names=$(v net-list --all --name) || return 1
  for n in $names; do
    if [ -z "$n" ] || kept "$n" "$keep_networks"; then continue; fi
    if [ "$(v net-dumpxml --network "$n" 2>/dev/null | mark)" = "$cluster" ]; then printf '%s\\n' "$n"; fi
  done
}

# A volume is ours when it lies in the cluster pool and is <node>.<cluster><suffix>.
ours() {
  for suffix in ${SUFFIXES}; do
    node=\${1%".$cluster$suffix"}
    case $node in "$1" | '' | *.*) ;; *) return 0 ;; esac
  done
  return 1
}

leftover_volumes() {
  # No pool yet (a first run) or a stopped one: nothing of ours can be listed there.
  [ "$(v pool-info --pool "$pool" 2>/dev/null | sed -n 's/^State: *//p')" = running ] || return 0
  v pool-refresh --pool "$pool" >/dev/null || return 1
  names=$(v vol-list --pool "$pool" | awk '{ print $1 }') || return 1
  for x in $names; do
    if [ -z "$x" ] || kept "$x" "$keep_volumes" || ! ours "$x"; then continue; fi
    printf '%s\\n' "$x"
  done
}

leftovers() {
  d=$(leftover_domains) || fail "cannot list the domains at $uri"
  n=$(leftover_networks) || fail "cannot list the networks at $uri"
  x=$(leftover_volumes) || fail "cannot list the volumes of pool $pool at $uri"
  for i in $d; do echo "domain $i"; done
  for i in $x; do echo "volume $pool/$i"; done
  for i in $n; do echo "network $i"; done
}
`;

// Exit 0 only when nothing is left over, so a re-run reports no change.
const CHECK = shellCode(`found=$(leftovers) || exit 2
if [ -n "$found" ]; then printf '%s\\n' "$found" | sed 's/^/leftover /'; exit 1; fi
echo "no leftovers of $cluster"
`);

// Domains first (they hold the volumes and sit on the network), then
// volumes, then networks. A domain's storage is removed through the pool,
// never with undefine --remove-all-storage: that would also delete media
// outside the pool the domain merely uses (an install ISO).
export const APPLY = shellCode(`d=$(leftover_domains) || fail "cannot list the domains at $uri"
for i in $d; do
  if v list --name | grep -Fxq -- "$i"; then v destroy --domain "$i" >/dev/null || fail "cannot stop domain $i"; fi
  if v dominfo --domain "$i" 2>/dev/null | grep -q '^Persistent: *yes'; then
    v undefine --domain "$i" --managed-save --snapshots-metadata --checkpoints-metadata --nvram >/dev/null || fail "cannot undefine domain $i"
  fi
  echo "removed domain $i"
done
x=$(leftover_volumes) || fail "cannot list the volumes of pool $pool at $uri"
for i in $x; do
  v vol-delete --pool "$pool" --vol "$i" >/dev/null || fail "cannot delete volume $pool/$i"
  echo "removed volume $pool/$i"
done
n=$(leftover_networks) || fail "cannot list the networks at $uri"
for i in $n; do
  if v net-list --name | grep -Fxq -- "$i"; then v net-destroy --network "$i" >/dev/null || fail "cannot stop network $i"; fi
  if v net-info --network "$i" 2>/dev/null | grep -q '^Persistent: *yes'; then v net-undefine --network "$i" >/dev/null || fail "cannot undefine network $i"; fi
  echo "removed network $i"
done
left=$(leftovers) || exit 2
if [ -n "$left" ]; then printf '%s\\n' "$left" | sed 's/^/still there: /' >&2; exit 1; fi
`);
