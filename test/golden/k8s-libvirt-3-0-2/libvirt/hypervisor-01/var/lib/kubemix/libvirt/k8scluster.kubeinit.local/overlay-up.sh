#!/bin/sh
# The VXLAN mesh of k8scluster.kubeinit.local on hypervisor-01: bridge, VXLAN link, one FDB entry per peer.
fail() { echo "$*" >&2; exit 2; }
br=kmxbr4cd25278
vx=kmxvx4cd25278
vni=14091243
port=64789
mtu=1450
peers=hv2.example.com
# A peer named by host name is reached at its first IPv4 address.
resolve() {
  case "$1" in
    *[!0-9.]*) getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }' ;;
    *) echo "$1" ;;
  esac
}
has_peer() { bridge fdb show dev "$vx" | grep -q "^00:00:00:00:00:00 dst $1 "; }
waited=0
until ip link show "$br" >/dev/null 2>&1; do
  [ "$waited" -lt 120 ] || fail "no bridge $br after 120 s: the cluster's libvirt network is not running"
  sleep 1
  waited=$((waited + 1))
done
ip link show "$vx" >/dev/null 2>&1 ||
  ip link add "$vx" type vxlan id "$vni" dstport "$port" || fail "cannot make VXLAN link $vx (UDP $port)"
ip link set "$vx" mtu "$mtu" master "$br" up || fail "cannot attach $vx to $br"
for p in $peers; do
  ip=$(resolve "$p")
  [ -n "$ip" ] || fail "cannot resolve hypervisor $p to an IPv4 address"
  has_peer "$ip" || bridge fdb append 00:00:00:00:00:00 dev "$vx" dst "$ip" || fail "cannot add peer $ip to $vx"
done
echo "$vx (VNI $vni, UDP $port) joins $br to: $peers"
