// MTUs: the node network's, and what is left for pods after encapsulation.
import { OVERHEAD } from '../matrix/index.js';
import type { ClusterSpec } from '../spec/types.js';

const ETHERNET_MTU = 1500;

/** Across several hypervisors the node network is an OVN Geneve overlay (1500 − 58 = 1442). */
export function nodeMtu(spec: ClusterSpec): number {
  if (spec.network.mtu !== undefined) return spec.network.mtu;
  const overOvn = spec.driver === 'libvirt' && spec.hypervisors.length > 1;
  return overOvn ? ETHERNET_MTU - OVERHEAD.geneve : ETHERNET_MTU;
}

/** The largest pod MTU that fits: node MTU minus VXLAN's 50 bytes (host-gw adds none). */
export function podMtu(spec: ClusterSpec): number {
  const max = nodeMtu(spec) - (spec.cni.backend === 'vxlan' ? OVERHEAD.vxlan : 0);
  return spec.cni.mtu === undefined ? max : Math.min(spec.cni.mtu, max);
}
