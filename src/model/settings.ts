// The cluster-wide settings later steps need, resolved once from the spec so
// render/, plan/ and interop/ never read the raw spec: the pod overlay, the
// pod and service networks per address family, proxy, mirrors, the services
// node's toggles. (The driver resolves the hypervisors: drivers/.)
import { parseCidr } from '../net/cidr.js';
import { podMtu } from '../net/mtu.js';
import { mtuSettings } from '../spec/mtu.js';
import type { ClusterSpec } from '../spec/types.js';
import type { AddressRanges, HttpProxy, Mirrors, PlanCluster, PodOverlay, ServicesSettings } from './types.js';

export function resolveOverlay(spec: ClusterSpec): PodOverlay {
  const { plugin, backend } = spec.cni;
  return { plugin, backend, vxlan: vxlanOf(spec.cni), podMtu: podMtu(mtuSettings(spec)) };
}

/**
 * VXLAN's VNI and port when the backend encapsulates, else undefined: the one
 * place that compares backend names, for the spec and for a plan's header.
 */
export function vxlanOf(cni: Pick<PlanCluster['cni'], 'backend' | 'vni' | 'port'>): PodOverlay['vxlan'] {
  return cni.backend === 'vxlan' ? { vni: cni.vni, port: cni.port } : undefined;
}

/** `10.244.0.0/16,fd00:10:244::/56` → both ranges, and each under its family. */
export function addressRanges(text: string): AddressRanges {
  const all = text.split(',').map((c) => c.trim());
  const ofFamily = (family: 4 | 6): string | undefined => all.find((c) => parseCidr(c)?.family === family);
  return { all, ipv4: ofFamily(4), ipv6: ofFamily(6) };
}

export function resolveProxy(spec: ClusterSpec): HttpProxy | undefined {
  const p = spec.proxy;
  if (p === undefined || (p.http === undefined && p.https === undefined)) return undefined;
  return { http: p.http, https: p.https, noProxy: p.noProxy };
}

export function resolveMirrors(spec: ClusterSpec): Mirrors {
  const images = Object.entries(spec.mirrors.images)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([registry, mirror]) => ({ registry, mirror }));
  return { images, artifacts: spec.mirrors.artifacts };
}

export function resolveServices(spec: ClusterSpec): ServicesSettings | undefined {
  const s = spec.services;
  if (!s.enabled) return undefined;
  return { dns: s.dns, loadBalancer: s.loadBalancer, dhcp: s.dhcp, registry: s.registry, forwarders: s.forwarders };
}
