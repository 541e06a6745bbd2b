// Where the libvirt driver keeps things on a hypervisor, beyond the naming
// contract in names.ts: the rendered definitions it uploads, and the image
// cache that outlives clusters. Pure.
import { clusterIdentity, LIBVIRT_IMAGES, poolName } from './names.js';
import type { DriverModel } from '../types.js';

/**
 * Base images (cloud images, install ISOs) by file name, shared by every
 * cluster on the hypervisor and fetched once; `kubemix down` leaves it.
 */
export const IMAGE_CACHE = `${LIBVIRT_IMAGES}/kubemix/images`;

/** Domain types a hypervisor may run guests with: KVM, or QEMU's software emulation (TCG). */
export type DomainType = 'kvm' | 'qemu';

/** The uploaded definitions of one cluster on a hypervisor (root-only: seeds hold host keys). */
export function definitionsDir(model: {
  readonly cluster: { readonly name: string; readonly domain: string };
}): string {
  return `/var/lib/kubemix/libvirt/${clusterIdentity(model.cluster)}`;
}

export function clusterPool(model: Pick<DriverModel, 'cluster'>): string {
  return poolName(clusterIdentity(model.cluster));
}

/** The base image a Linux guest's disk overlays: the distro's cloud image in the cache. */
export function baseImagePath(os: string): string {
  return `${IMAGE_CACHE}/${os}.qcow2`;
}

/** The Windows Server install ISO and the virtio-win driver ISO, in the cache. */
export function installIsoPath(os: string): string {
  return `${IMAGE_CACHE}/${os}.iso`;
}
export const VIRTIO_WIN_ISO = `${IMAGE_CACHE}/virtio-win.iso`;
