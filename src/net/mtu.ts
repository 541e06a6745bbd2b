// MTU arithmetic: the node network's MTU, and what is left for pods after the
// pod overlay's encapsulation. Header sizes come from the matrix (VXLAN over
// IPv4: 50 bytes, RFC 7348: outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14).
import { OVERHEAD } from '../matrix/index.js';

export const ETHERNET_MTU = 1500;

export interface MtuSettings {
  /** The node network MTU the operator set, if any. */
  readonly nodeMtu?: number | undefined;
  /** The node network is itself a VXLAN overlay (libvirt's bridges across several hypervisors). */
  readonly nodeNetworkIsVxlan: boolean;
  /** Pods talk across nodes in VXLAN (host-gw adds no header). */
  readonly podOverlayIsVxlan: boolean;
  /** The pod MTU the operator asked for, if any. */
  readonly podMtu?: number | undefined;
}

/** Unless set, Ethernet's 1500, or 1500 − 50 = 1450 when the node network is a VXLAN overlay. */
export function nodeMtu(settings: MtuSettings): number {
  if (settings.nodeMtu !== undefined) return settings.nodeMtu;
  return settings.nodeNetworkIsVxlan ? ETHERNET_MTU - OVERHEAD.vxlan : ETHERNET_MTU;
}

/** The largest pod MTU that fits: node MTU minus VXLAN's 50 bytes. */
export function maxPodMtu(settings: MtuSettings): number {
  return nodeMtu(settings) - (settings.podOverlayIsVxlan ? OVERHEAD.vxlan : 0);
}

/** The pod MTU asked for, capped at the largest that fits. */
export function podMtu(settings: MtuSettings): number {
  const max = maxPodMtu(settings);
  return settings.podMtu === undefined ? max : Math.min(settings.podMtu, max);
}
