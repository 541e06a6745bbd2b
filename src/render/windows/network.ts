// flannel's network on a Windows worker: the HNS network name, net-conf.json
// and the CNI config. The CNI `name` must equal the HNS network flanneld
// creates, or pods never find their network; flanneld's Windows backends name it
// `flannel.<VNI>` (vxlan, HNS Overlay) and `cbr0` (host-gw, HNS L2Bridge) (flannel-io/flannel).
import { CALICO_WINDOWS, WINDOWS_EXTERNAL_HNS_CIDR } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode, PodOverlay } from '../../model/types.js';
import { WIN } from './paths.js';

/**
 * The pod network's HNS network: flanneld's `flannel.<VNI>` (Overlay) or `cbr0`
 * (L2Bridge); with Calico, the network calico-node-windows creates (`Calico`).
 */
export function hnsNetworkName(
  overlay: Pick<PodOverlay, 'vxlan'> & { readonly plugin?: PodOverlay['plugin'] },
): string {
  if (overlay.plugin === 'calico') return CALICO_WINDOWS.network;
  return overlay.vxlan === undefined ? 'cbr0' : `flannel.${overlay.vxlan.vni}`;
}

/** The persistent network created before flanneld so its rebuilds keep the host connected. */
export const EXTERNAL_NETWORK = {
  name: 'External',
  cidr: WINDOWS_EXTERNAL_HNS_CIDR,
  gateway: '192.168.255.1',
  vsid: 9999,
} as const;

/** The IPv4 pod range: flannel on Windows is single-stack (the Linux net-conf's `Network` is the same range). */
export function podCidrV4(model: ClusterModel): string {
  return model.podNetworks.ipv4 ?? '';
}

/** flanneld's net-conf.json; must agree with the Linux ConfigMap (same Network and Backend). */
export function netConfJson(model: ClusterModel): string {
  const vxlan = model.overlay.vxlan;
  const backend = vxlan === undefined ? { Type: 'host-gw' } : { Type: 'vxlan', VNI: vxlan.vni, Port: vxlan.port };
  return `${JSON.stringify({ Network: podCidrV4(model), Backend: backend }, null, 2)}\n`;
}

type Policy = { Name: 'EndpointPolicy'; Value: Record<string, unknown> };

const policy = (Type: string, Settings: Record<string, unknown>): Policy => ({
  Name: 'EndpointPolicy',
  Value: { Type, Settings },
});

/**
 * OutBoundNAT exceptions are the pod and service CIDRs only. The node network
 * is deliberately absent: pods must be NATed to reach the services node, the
 * gateway and the hypervisors, which do not route pod CIDRs.
 */
export function natExceptions(model: ClusterModel): string[] {
  return [podCidrV4(model), serviceCidrV4(model)];
}

function serviceCidrV4(model: ClusterModel): string {
  return model.serviceNetworks.ipv4 ?? '';
}

function delegate(model: ClusterModel, node: PlanNode): Record<string, unknown> {
  const service = serviceCidrV4(model);
  const nat = policy('OutBoundNAT', { Exceptions: natExceptions(model) });
  if (model.overlay.vxlan !== undefined) {
    return {
      type: 'sdnoverlay',
      AdditionalArgs: [
        nat,
        policy('SDNRoute', { DestinationPrefix: service, NeedEncap: true }),
        policy('ProviderAddress', { ProviderAddress: node.ip }),
      ],
    };
  }
  return {
    type: 'sdnbridge',
    optionalFlags: { forceBridgeGateway: true },
    AdditionalArgs: [
      nat,
      policy('SDNRoute', { DestinationPrefix: service, NeedEncap: true }),
      policy('SDNRoute', { DestinationPrefix: `${node.ip}/32`, NeedEncap: true }),
    ],
  };
}

/** The one file in the CNI config directory (the first file there wins). */
export function cniConfig(model: ClusterModel, node: PlanNode): string {
  const conf = {
    cniVersion: '0.3.0',
    name: hnsNetworkName(model.overlay),
    type: 'flannel',
    capabilities: { portMappings: true, dns: true },
    delegate: delegate(model, node),
  };
  return `${JSON.stringify(conf, null, 2)}\n`;
}

export const CNI_CONF_PATH = WIN.cniConf;
