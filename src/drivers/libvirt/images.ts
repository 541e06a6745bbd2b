// The cloud image a Linux guest's disk overlays: which URL a hypervisor
// fetches it from and how it checks the file before keeping it in its image
// cache (fetched once per hypervisor, kept for every later cluster). The
// spec's `downloads["images/<distro>"]` pins win (url, needing sha256: a
// mirror or a local `file:///` path); else the matrix's URL, behind the
// artifact mirror when the spec names one, checked against the checksum list
// its vendor publishes beside it. Pure.
import { InputError } from '../../errors.js';
import { CLOUD_IMAGES, cloudImageId, INSTALL_ISOS, installIsoId } from '../../matrix/index.js';
import type { DriverModel } from '../types.js';

export interface CloudImageSource {
  readonly id: string;
  readonly url: string;
  /** The spec's pinned SHA256 (lower-case hex). */
  readonly sha256?: string;
  /** Otherwise the vendor's checksum list, the file's name in it, and its digest. */
  readonly list?: { readonly url: string; readonly name: string; readonly algo: 'sha256' | 'sha512' };
}

/** `https://host/path` → `<mirror>/host/path` (the layout of spec.mirrors.artifacts). */
function mirrored(url: string, mirror: string | undefined): string {
  if (mirror === undefined) return url;
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${u.host}${u.pathname}`;
}

/**
 * A pinned URL as the hypervisor's task reads it: a `file:` URL in WHATWG URL's form, so `file://localhost/p`
 * (RFC 8089: the same file as `file:///p`) and `file:/p` become `file:///p`, whose path the task checks.
 */
function pinned(url: string): string {
  return /^file:/i.test(url) ? new URL(url).href : url;
}

export function cloudImageSource(model: DriverModel, distro: string): CloudImageSource {
  const id = cloudImageId(distro);
  const pin = model.spec.downloads[id];
  const known = CLOUD_IMAGES[distro];
  if (pin?.url !== undefined && pin.sha256 !== undefined)
    return { id, url: pinned(pin.url), sha256: pin.sha256.toLowerCase() };
  if (known === undefined || known === null)
    throw new InputError(
      'downloads.no-cloud-image',
      `kubemix knows no cloud image for ${distro} to run it under libvirt`,
      {
        path: `spec.downloads.${id}`,
        hint: `give spec.downloads.${id}.url (https:// or a file:/// path on the hypervisor) and its .sha256`,
      },
    );
  const mirror = model.spec.mirrors.artifacts;
  const url = mirrored(known.url, mirror);
  if (pin?.sha256 !== undefined) return { id, url, sha256: pin.sha256.toLowerCase() };
  const name = new URL(known.url).pathname.split('/').pop() ?? '';
  return { id, url, list: { url: mirrored(known.list.url, mirror), name, algo: known.list.algo } };
}

/** Where an install ISO (a Windows Server build, or virtio-win) comes from: the spec's pin, else the matrix. */
export interface InstallIsoSource {
  readonly id: string;
  readonly url: string;
  /** The spec's pinned SHA256; without it the file is taken as served (no vendor list exists). */
  readonly sha256?: string;
}

export function installIsoSource(model: DriverModel, name: string): InstallIsoSource {
  const id = installIsoId(name);
  const pin = model.spec.downloads[id];
  const sha256 = pin?.sha256 === undefined ? {} : { sha256: pin.sha256.toLowerCase() };
  if (pin?.url !== undefined) return { id, url: pinned(pin.url), ...sha256 };
  const known = INSTALL_ISOS[name];
  if (known === undefined)
    throw new InputError('downloads.no-install-iso', `kubemix knows no install ISO for ${name}`, {
      path: `spec.downloads.${id}`,
      hint: `give spec.downloads.${id}.url (https:// or a file:/// path on the hypervisor) and its .sha256`,
    });
  // Not behind spec.mirrors.artifacts: Microsoft's links are redirects whose query names the file.
  return { id, url: known.url, ...sha256 };
}
