// Calico through the Tigera operator (Calico docs, "Install Calico for
// Windows" with the operator), our own custom
// resources: VXLAN only (BGP off), VNI/port as the spec says (≥ 4096 / 4789,
// what Windows needs, set before calico-node first starts), IPAM strict
// affinity (Windows nodes cannot borrow addresses from other nodes' blocks),
// the pod MTU of the model, node addresses picked from the node network.
import { CALICO_WINDOWS } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from '../windows/paths.js';

type Obj = Record<string, unknown>;
export const TIGERA_NAMESPACE = 'tigera-operator';
/** Where the operator runs calico-node (Linux) and calico-node-windows (HostProcess). */
export const CALICO_NAMESPACE = 'calico-system';
export const CALICO_WINDOWS_DAEMONSET = 'calico-node-windows';

const WINDOWS_NODES = {
  cniBinDir: WIN.cniBin,
  cniConfigDir: WIN.cniConfDir,
  cniLogDir: `${WIN.logs}\\calico\\cni`,
} as const;

/**
 * Objects in apply order. Felix and IPAM settings come before the
 * Installation, so calico-node starts with them. The crd.projectcalico.org
 * kinds are the ones the operator's CRDs define (no Calico API server yet).
 */
export function calicoObjects(model: ClusterModel): Obj[] {
  const { network, apiEndpoint } = model.cluster;
  // The spec rules allow Calico with the vxlan backend and one pod range only.
  const vxlan = model.overlay.vxlan;
  const windows = model.nodes.some((n) => n.osFamily === 'windows');
  return [
    // The operator and calico-node reach the API here instead of through the
    // service VIP (which needs the CNI first); by address, so no DNS is needed
    // either (the API certificate carries it: kubeadm certSANs).
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kubernetes-services-endpoint', namespace: TIGERA_NAMESPACE },
      data: { KUBERNETES_SERVICE_HOST: apiEndpoint.address, KUBERNETES_SERVICE_PORT: String(apiEndpoint.port) },
    },
    {
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'FelixConfiguration',
      metadata: { name: 'default' },
      spec: { vxlanVNI: vxlan?.vni, vxlanPort: vxlan?.port },
    },
    {
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPAMConfig',
      metadata: { name: 'default' },
      spec: { strictAffinity: true, autoAllocateBlocks: true },
    },
    {
      apiVersion: 'operator.tigera.io/v1',
      kind: 'Installation',
      metadata: { name: 'default' },
      spec: {
        variant: 'Calico',
        // The Windows dataplane needs the service CIDRs to program its load balancers.
        serviceCIDRs: model.serviceNetworks.all,
        cni: { type: 'Calico', ipam: { type: 'Calico' } },
        // Where calico-node-windows installs calico.exe and its config: containerd's CNI
        // directories on our Windows nodes (the operator's field docs: they must match config.toml).
        ...(windows ? { windowsNodes: WINDOWS_NODES } : {}),
        calicoNetwork: {
          bgp: 'Disabled',
          mtu: model.overlay.podMtu,
          linuxDataplane: 'Iptables',
          windowsDataplane: windows ? 'HNS' : 'Disabled',
          nodeAddressAutodetectionV4: { cidrs: [network.nodeCidr] },
          ipPools: [
            {
              name: 'default-ipv4-ippool',
              cidr: model.podNetworks.all[0],
              encapsulation: 'VXLAN',
              natOutgoing: 'Enabled',
              nodeSelector: 'all()',
              blockSize: CALICO_WINDOWS.blockSize,
            },
          ],
        },
      },
    },
  ];
}
