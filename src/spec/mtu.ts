// Which of the spec's fields decide the MTUs (the arithmetic is net/mtu.ts).
import { driverTraits } from '../drivers/traits.js';
import type { MtuSettings } from '../net/mtu.js';
import type { ClusterSpec } from './types.js';

/** The driver says whether its node network is an overlay between hosts (libvirt across several hypervisors). */
export function mtuSettings(spec: ClusterSpec): MtuSettings {
  return {
    nodeMtu: spec.network.mtu,
    nodeNetworkIsVxlan: driverTraits(spec.driver).nodeNetworkIsOverlay(spec),
    podOverlayIsVxlan: spec.cni.backend === 'vxlan',
    podMtu: spec.cni.mtu,
  };
}
