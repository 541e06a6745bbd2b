// task-create-network, before the cluster network is defined: refuse a node
// CIDR that overlaps an IPv4 range of another libvirt network on the
// hypervisor (running or not), naming it. Two networks with overlapping
// ranges on one host route each other's guests into the wrong bridge, and
// libvirt only refuses the overlap when both are started at once. Clusters
// side by side each have their own network, bridge and CIDR (names.ts).
import { shell, shellCode } from '../../../util/escape/index.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverTask } from '../../types.js';
import { script, NETWORK, PREPARE, ref } from './common.js';

export const CIDR_TASK = 'network-cidr';

export function cidrTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  const cidr = model.cluster.network.nodeCidr;
  return {
    stage: NETWORK,
    host: hv.name,
    name: CIDR_TASK,
    description: `refuse when ${cidr} overlaps another libvirt network on ${hv.name}`,
    after: [ref(PREPARE, hv.name, 'libvirt')],
    check: null,
    apply: sh(
      script(
        model,
        hv,
        shell`want=${cidr}
${RANGES}found=0
for n in $(v net-list --all --name); do
  [ "$n" = "$net" ] && continue
  xml=$(v net-dumpxml --network "$n") || fail "cannot read libvirt network $n"
  for r in $(printf '%s\\n' "$xml" | ranges); do
    echo "${hv.name}: the node network $want overlaps libvirt network $n ($r)" >&2
    found=1
  done
done
[ "$found" -eq 0 ] || fail "choose another spec.network.nodeCidr, or remove that network (virsh net-destroy / net-undefine)"
echo "$want overlaps no other libvirt network on ${hv.name}"
`,
      ),
    ),
    timeoutSeconds: 60,
  };
}

// The IPv4 ranges (<ip address= prefix=|netmask=>) of a network's XML that
// overlap $want. Without prefix or netmask libvirt takes the address class's
// (A: /8, B: /16, C: /24); IPv6 ranges are skipped (node networks are IPv4).
const RANGES = shellCode(`ranges() {
  awk -v want="$want" '
function ip(s,  a) { split(s, a, "."); return ((a[1] * 256 + a[2]) * 256 + a[3]) * 256 + a[4] }
function attr(line, name) {
  if (!match(line, name "=[\\"\\047][^\\"\\047]*")) return ""
  return substr(line, RSTART + length(name) + 2, RLENGTH - length(name) - 2)
}
function bits(mask,  v, n, i) {
  v = ip(mask); n = 0
  for (i = 31; i >= 0 && v >= 2 ^ i; i--) { n++; v -= 2 ^ i }
  return n
}
function first(a, p) { return a - a % 2 ^ (32 - p) }
BEGIN { split(want, w, "/"); ws = first(ip(w[1]), w[2]); we = ws + 2 ^ (32 - w[2]) - 1 }
/<ip[ >]/ && !/family=["\\047]ipv6/ {
  a = attr($0, "address"); if (a == "") next
  p = attr($0, "prefix")
  if (p == "") { m = attr($0, "netmask"); p = m != "" ? bits(m) : (a + 0 < 128 ? 8 : a + 0 < 192 ? 16 : 24) }
  s = first(ip(a), p); e = s + 2 ^ (32 - p) - 1
  if (s <= we && ws <= e) print a "/" p
}'
}
`);
