// The node network across several hypervisors: one Linux bridge per
// hypervisor, joined by a full mesh of kernel VXLAN links (unicast: one
// all-zero FDB entry per peer, so broadcast and unknown frames — DHCP, ARP —
// reach every peer, and the bridge learns the rest). The first hypervisor is
// the gateway: its bridge is the libvirt NAT network's (gateway address,
// dnsmasq with every guest's reservation, NAT to the outside); the others'
// bridges are plain, made by this script, and their libvirt networks only
// attach guests to them (<forward mode='bridge'/>). So one DHCP server and
// one gateway serve the whole segment.
//
// UDP port 64789: not 4789 (IANA's VXLAN port, which flannel must use on
// these same hosts because Windows nodes accept no other), not 8472 (the
// Linux kernel's old default and flannel's Linux default), not 4790
// (VXLAN-GPE) nor 6081 (Geneve). Ports 49152–65535 are the dynamic range
// IANA never assigns (RFC 6335 §6), and above 60999 Linux hands out no
// ephemeral ports by default (net.ipv4.ip_local_port_range = 32768 60999),
// so no local socket takes it first.
//
// Links made by `ip` do not survive a reboot of the hypervisor: a systemd
// unit of the cluster's own (every supported hypervisor distro boots with
// systemd) re-runs the same idempotent script at boot, after the network is
// online and libvirt has started; on the gateway the script waits a bounded
// time for libvirt to bring its autostarted network's bridge back. The unit
// carries a marker line, so `kubemix down` removes only a unit it wrote. Pure.
import { shell, type ShellText, systemdQuote } from '../../../util/escape/index.js';
import type { DriverHypervisor, DriverModel } from '../../types.js';
import { bridgeName, clusterIdentity, vxlanId, vxlanName } from '../names.js';

export const OVERLAY_PORT = 64789;

/** Several hypervisors: their guests share one L2 segment across the mesh. */
export function hasOverlay(model: Pick<DriverModel, 'hypervisors'>): boolean {
  return model.hypervisors.length > 1;
}

/** The hypervisor whose libvirt network holds the gateway, DHCP and NAT (the first). */
export function gatewayHypervisor(model: Pick<DriverModel, 'hypervisors'>): DriverHypervisor {
  const first = model.hypervisors[0];
  if (first === undefined) throw new Error('a libvirt model without hypervisors');
  return first;
}

export function isGateway(model: Pick<DriverModel, 'hypervisors'>, hv: DriverHypervisor): boolean {
  return gatewayHypervisor(model).name === hv.name;
}

/** The link names and settings the overlay scripts and `down` share. */
export function overlayLinks(model: Pick<DriverModel, 'cluster'>): { bridge: string; vxlan: string; vni: number } {
  const id = clusterIdentity(model.cluster);
  return { bridge: bridgeName(id), vxlan: vxlanName(id), vni: vxlanId(id) };
}

function head(model: DriverModel, hv: DriverHypervisor): ShellText {
  const { bridge, vxlan, vni } = overlayLinks(model);
  const peers = model.hypervisors.filter((h) => h.name !== hv.name).map((h) => h.address);
  return shell`br=${bridge}
vx=${vxlan}
vni=${vni}
port=${OVERLAY_PORT}
mtu=${model.cluster.network.nodeMtu}
peers=${peers.join(' ')}
# A peer named by host name is reached at its first IPv4 address.
resolve() {
  case "$1" in
    *[!0-9.]*) getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }' ;;
    *) echo "$1" ;;
  esac
}
has_peer() { bridge fdb show dev "$vx" | grep -q "^00:00:00:00:00:00 dst $1 "; }
`;
}

/** Brings the mesh up on one hypervisor (idempotent); exits 2 naming what failed. */
export function overlayUpScript(model: DriverModel, hv: DriverHypervisor): string {
  // At boot libvirt may bring the network (and its bridge) up after this runs: wait for it, bounded.
  const bridge = isGateway(model, hv)
    ? shell`waited=0
until ip link show "$br" >/dev/null 2>&1; do
  [ "$waited" -lt ${BRIDGE_WAIT_SECONDS} ] || fail "no bridge $br after ${BRIDGE_WAIT_SECONDS} s: the cluster's libvirt network is not running"
  sleep 1
  waited=$((waited + 1))
done
`
    : shell`ip link show "$br" >/dev/null 2>&1 || ip link add "$br" type bridge || fail "cannot make bridge $br"
ip link set "$br" mtu "$mtu" up || fail "cannot bring up $br"
`;
  return shell`#!/bin/sh
# The VXLAN mesh of ${clusterIdentity(model.cluster)} on ${hv.name}: bridge, VXLAN link, one FDB entry per peer.
fail() { echo "$*" >&2; exit 2; }
${head(model, hv)}${bridge}ip link show "$vx" >/dev/null 2>&1 ||
  ip link add "$vx" type vxlan id "$vni" dstport "$port" || fail "cannot make VXLAN link $vx (UDP $port)"
ip link set "$vx" mtu "$mtu" master "$br" up || fail "cannot attach $vx to $br"
for p in $peers; do
  ip=$(resolve "$p")
  [ -n "$ip" ] || fail "cannot resolve hypervisor $p to an IPv4 address"
  has_peer "$ip" || bridge fdb append 00:00:00:00:00:00 dev "$vx" dst "$ip" || fail "cannot add peer $ip to $vx"
done
echo "$vx (VNI $vni, UDP $port) joins $br to: $peers"
`.text;
}

/** Exits 0 when the mesh is up as overlayUpScript makes it, 1 otherwise (saying what is missing). */
export function overlayCheckScript(model: DriverModel, hv: DriverHypervisor): ShellText {
  return shell`${head(model, hv)}ip link show "$br" >/dev/null 2>&1 || { echo "no bridge $br"; exit 1; }
link=$(ip -d link show "$vx" 2>/dev/null) || { echo "no VXLAN link $vx"; exit 1; }
for want in "mtu $mtu " "master $br " "vxlan id $vni " "dstport $port "; do
  case "$link" in *"$want"*) ;; *) echo "$vx lacks '$want'"; exit 1 ;; esac
done
for p in $peers; do has_peer "$(resolve "$p")" || { echo "no FDB entry for peer $p"; exit 1; }; done
`;
}

/** How long the gateway's script waits for libvirt's bridge (at boot, its network autostarts meanwhile). */
export const BRIDGE_WAIT_SECONDS = 120;

/** Where systemd reads units an administrator (here kubemix) installs (systemd.unit(5), "System Unit Search Path"). */
export const UNIT_DIR = '/etc/systemd/system';

/** The boot unit of the cluster's mesh, named by the same hash as its links. */
export function overlayUnitName(model: Pick<DriverModel, 'cluster'>): string {
  return `kubemix-${overlayLinks(model).vxlan}.service`;
}

/** The unit's first line: `kubemix down` removes a unit of this name only when it carries it. */
export function overlayUnitMarker(model: Pick<DriverModel, 'cluster'>): string {
  return `# kubemix: the VXLAN mesh of ${clusterIdentity(model.cluster)}`;
}

/**
 * A oneshot unit that runs the up script (`script`, its path on the
 * hypervisor) once per boot, after the network is online and after
 * libvirt's daemons (monolithic libvirtd, or the modular virtnetworkd of
 * Fedora and CentOS Stream); ordering after a unit that is not installed is
 * a no-op (systemd.unit(5), After=). Values are systemd-quoted.
 */
export function overlayUnit(model: Pick<DriverModel, 'cluster'>, script: string): string {
  const id = clusterIdentity(model.cluster);
  return `${overlayUnitMarker(model)}
# Recreates bridge ${overlayLinks(model).bridge}, VXLAN link ${overlayLinks(model).vxlan} and its peers at boot.
[Unit]
Description=kubemix VXLAN mesh of ${id.replaceAll('%', '%%')}
Wants=network-online.target
After=network-online.target libvirtd.service virtnetworkd.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh ${systemdQuote(script)}
TimeoutStartSec=${BRIDGE_WAIT_SECONDS + 60}

[Install]
WantedBy=multi-user.target
`;
}
