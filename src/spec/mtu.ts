// Which of the spec's fields decide the MTUs (the arithmetic is net/mtu.ts).
import type { MtuSettings } from '../net/mtu.js';
import type { ClusterSpec } from './types.js';

/** Across several hypervisors the libvirt driver joins the node network with an OVN Geneve overlay. */
export function mtuSettings(spec: ClusterSpec): MtuSettings {
  return {
    nodeMtu: spec.network.mtu,
    nodeNetworkIsGeneve: spec.driver === 'libvirt' && spec.hypervisors.length > 1,
    podOverlayIsVxlan: spec.cni.backend === 'vxlan',
    podMtu: spec.cni.mtu,
  };
}
