// flannel's network on a Windows worker: the HNS network name, net-conf.json
// and the CNI config. The CNI `name` must equal the HNS network flanneld
// creates, or pods never find their network (REFERENCE.md §5).
import { WINDOWS_EXTERNAL_HNS_CIDR } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanCluster, PlanNode } from '../../model/types.js';
import { WIN } from './paths.js';

/** The HNS network flanneld creates: `flannel.<VNI>` (Overlay) or `cbr0` (L2Bridge). */
export function hnsNetworkName(cni: PlanCluster['cni']): string {
  return cni.backend === 'vxlan' ? `flannel.${cni.vni}` : 'cbr0';
}

/** The persistent network created before flanneld so its rebuilds keep the host connected. */
export const EXTERNAL_NETWORK = {
  name: 'External',
  cidr: WINDOWS_EXTERNAL_HNS_CIDR,
  gateway: '192.168.255.1',
  vsid: 9999,
} as const;

/** The first (IPv4) pod CIDR: flannel on Windows is single-stack. */
export function podCidrV4(cluster: PlanCluster): string {
  return cluster.network.podCidr.split(',')[0]?.trim() ?? '';
}

/** flanneld's net-conf.json; must agree with the Linux ConfigMap (same Network and Backend). */
export function netConfJson(cluster: PlanCluster): string {
  const backend =
    cluster.cni.backend === 'vxlan'
      ? { Type: 'vxlan', VNI: cluster.cni.vni, Port: cluster.cni.port }
      : { Type: 'host-gw' };
  return `${JSON.stringify({ Network: podCidrV4(cluster), Backend: backend }, null, 2)}\n`;
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
export function natExceptions(cluster: PlanCluster): string[] {
  return [podCidrV4(cluster), cluster.network.serviceCidr.split(',')[0]?.trim() ?? ''];
}

function delegate(model: ClusterModel, node: PlanNode): Record<string, unknown> {
  const { cluster } = model;
  const service = cluster.network.serviceCidr.split(',')[0]?.trim() ?? '';
  const nat = policy('OutBoundNAT', { Exceptions: natExceptions(cluster) });
  if (cluster.cni.backend === 'vxlan') {
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
    name: hnsNetworkName(model.cluster.cni),
    type: 'flannel',
    capabilities: { portMappings: true, dns: true },
    delegate: delegate(model, node),
  };
  return `${JSON.stringify(conf, null, 2)}\n`;
}

export const CNI_CONF_PATH = WIN.cniConf;
