// The libvirt naming and marking contract: what the libvirt driver calls the
// domains, network, storage pool and volumes it creates for a cluster, and
// the <metadata> element that marks a domain or network as belonging to it.
// task-cleanup-hypervisors reads the same contract to tell this cluster's
// leftovers from everything else on a hypervisor, so both sides must use
// these functions and nothing else. Pure.
import { xmlEscape } from '../../util/escape/index.js';
import { sha256Hex } from '../../util/json.js';

/** Where libvirt keeps disk images; the cluster pool lives below it. */
export const LIBVIRT_IMAGES = '/var/lib/libvirt/images';

/** The connection URI used when the spec names none for a hypervisor. */
export const DEFAULT_LIBVIRT_URI = 'qemu:///system';

/**
 * XML namespace of kubemix's <metadata> child. Versioned: a later contract
 * gets a new URI, so an old cleanup never mistakes a new mark (or back).
 */
export const METADATA_NAMESPACE = 'https://kubemix.dev/xmlns/libvirt/v1';
export const METADATA_PREFIX = 'kubemix';
export const METADATA_ELEMENT = 'cluster';

/**
 * What the mark says: `<cluster>.<domain>`. Cluster names alone repeat
 * across teams (every Kubeinit cluster is `k8scluster`); with the domain
 * they are as unique as the nodes' FQDNs.
 */
export function clusterIdentity(cluster: { readonly name: string; readonly domain: string }): string {
  return `${cluster.name}.${cluster.domain}`;
}

/** The domain (VM) of a node: its FQDN, unique across clusters on one hypervisor. */
export function domainName(node: { readonly fqdn: string }): string {
  return node.fqdn;
}

/** The cluster's libvirt network (one per hypervisor). */
export function networkName(clusterId: string): string {
  return `kubemix-${clusterId}`;
}

/**
 * The Linux bridge of the cluster network. Interface names stop at 15
 * characters, so it is a hash of the identity, not the identity itself.
 */
export function bridgeName(clusterId: string): string {
  return `kmxbr${sha256Hex(clusterId).slice(0, 8)}`;
}

/**
 * The VXLAN link that joins the cluster's bridges across hypervisors (only
 * with several). Same hash as the bridge, so the two are found together.
 */
export function vxlanName(clusterId: string): string {
  return `kmxvx${sha256Hex(clusterId).slice(0, 8)}`;
}

/** The cluster's VXLAN network identifier (24 bits, never 0), from the same hash. */
export function vxlanId(clusterId: string): number {
  return Number.parseInt(sha256Hex(`vni:${clusterId}`).slice(0, 6), 16) || 1;
}

/** The cluster's storage pool (a directory pool), one per hypervisor. */
export function poolName(clusterId: string): string {
  return `kubemix-${clusterId}`;
}

export function poolPath(clusterId: string): string {
  return `${LIBVIRT_IMAGES}/kubemix/${clusterId}`;
}

/**
 * Volumes a node's domain owns, by suffix after its domain name: the disk,
 * and the first-boot media (cloud-init NoCloud seed for Linux, the
 * Autounattend media for Windows). Storage volumes carry no <metadata>, so
 * cleanup recognises them by pool and by these suffixes only.
 */
export const VOLUME_SUFFIXES = { disk: '.qcow2', cloudInit: '-cidata.iso', unattend: '-unattend.iso' } as const;

export function volumeNames(node: { readonly fqdn: string; readonly osFamily: 'linux' | 'windows' }): string[] {
  const media = node.osFamily === 'windows' ? VOLUME_SUFFIXES.unattend : VOLUME_SUFFIXES.cloudInit;
  return [`${domainName(node)}${VOLUME_SUFFIXES.disk}`, `${domainName(node)}${media}`];
}

/** The mark's opening tag, as the driver writes it and cleanup finds it again. */
export const METADATA_OPEN = `<${METADATA_PREFIX}:${METADATA_ELEMENT} xmlns:${METADATA_PREFIX}="${xmlEscape(METADATA_NAMESPACE)}">`;
export const METADATA_CLOSE = `</${METADATA_PREFIX}:${METADATA_ELEMENT}>`;

/** The <metadata> content the driver puts into every domain and network XML it defines (`clusterId` XML-escaped). */
export function ownerMetadata(clusterId: string): string {
  return `${METADATA_OPEN}${clusterId}${METADATA_CLOSE}`;
}
