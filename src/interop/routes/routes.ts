// Static routes for the pod network. Upstream L3 routing (the topology of
// Kubernetes' Windows networking guide since v1.9): the top-of-rack router sends each node's pod CIDR to that node. flannel host-gw:
// every node routes every other node's pod CIDR to that node's IP. The pod
// CIDRs are the model's prediction (registration order) until read from a
// live cluster, and are marked so in every format.
import type { ClusterModel } from '../../model/resolve.js';
import { parseCidr, formatIp } from '../../net/cidr.js';

export interface PodRoute {
  readonly node: string;
  readonly destination: string;
  readonly via: string;
  readonly predicted: boolean;
}

export interface NodeRoutes {
  readonly node: string;
  readonly routes: readonly PodRoute[];
}

export type RoutesFormat = 'table' | 'ip' | 'cisco';

/** The routes a top-of-rack router needs: every node's pod CIDR → the node. */
export function torRoutes(model: ClusterModel): PodRoute[] {
  return model.nodes.flatMap((n) =>
    n.podCidr === undefined
      ? []
      : [{ node: n.name, destination: n.podCidr.cidr, via: n.ip, predicted: n.podCidr.predicted }],
  );
}

/** flannel host-gw: on each node, a route to every other node's pod CIDR. Empty for vxlan. */
export function hostGwRoutes(model: ClusterModel): NodeRoutes[] {
  if (model.overlay.vxlan !== undefined) return [];
  const all = torRoutes(model);
  return all.map((own) => ({ node: own.node, routes: all.filter((r) => r.node !== own.node) }));
}

/** `ip -batch` lines (`route add … via …`); `#` lines are comments `ip -batch` skips. */
export function ipBatch(routes: readonly PodRoute[], title: string): string {
  const lines = [`# ${title}`, '# pod CIDRs are predicted (registration order) until read from a live cluster'];
  for (const r of routes) lines.push(`route replace ${r.destination} via ${r.via} proto static`);
  return `${lines.join('\n')}\n`;
}

/** Cisco IOS `ip route PREFIX MASK NEXT-HOP name …`. */
export function ciscoRoutes(routes: readonly PodRoute[], title: string): string {
  const lines = [`! ${title}`, '! pod CIDRs are predicted (registration order) until read from a live cluster'];
  for (const r of routes)
    lines.push(
      `ip route ${prefixAndMask(r.destination)} ${r.via} name ${r.node}-pods${r.predicted ? '-predicted' : ''}`,
    );
  return `${lines.join('\n')}\n`;
}

function prefixAndMask(cidr: string): string {
  const c = parseCidr(cidr);
  if (c === undefined || c.family !== 4) return cidr;
  const mask = ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - c.prefix)) - 1n);
  return `${formatIp(4, c.base)} ${formatIp(4, mask)}`;
}
