// The cloud image each Linux distribution's libvirt guests overlay, by
// distro id: where its vendor publishes it under a stable name that always
// points at the current build, and the checksum list the vendor publishes
// beside it (read by the hypervisor before it keeps the file). A digest
// pinned in the spec (`spec.downloads["images/<distro>"].sha256`) wins over
// the list; a distro with no stable URL here needs the spec's url and sha256.
// Sources: cloud.debian.org/images/cloud (SHA512SUMS only, GNU format),
// cloud-images.ubuntu.com/releases (SHA256SUMS, GNU format with `*name`),
// cloud.centos.org/centos/<n>-stream (`<image>.SHA256SUM`, BSD format
// `SHA256 (name) = digest`). Fedora's image names carry a compose number
// that changes per release respin: pin url and sha256 in the spec.

export interface CloudImage {
  readonly url: string;
  readonly list: { readonly url: string; readonly algo: 'sha256' | 'sha512' };
}

const debian = (code: string, n: string): CloudImage => {
  const dir = `https://cloud.debian.org/images/cloud/${code}/latest`;
  return { url: `${dir}/debian-${n}-genericcloud-amd64.qcow2`, list: { url: `${dir}/SHA512SUMS`, algo: 'sha512' } };
};

const centos = (n: string): CloudImage => {
  const url = `https://cloud.centos.org/centos/${n}-stream/x86_64/images/CentOS-Stream-GenericCloud-${n}-latest.x86_64.qcow2`;
  return { url, list: { url: `${url}.SHA256SUM`, algo: 'sha256' } };
};

export const CLOUD_IMAGES: Readonly<Record<string, CloudImage | null>> = {
  'debian-12': debian('bookworm', '12'),
  'debian-13': debian('trixie', '13'),
  'ubuntu-24.04': {
    url: 'https://cloud-images.ubuntu.com/releases/noble/release/ubuntu-24.04-server-cloudimg-amd64.img',
    list: { url: 'https://cloud-images.ubuntu.com/releases/noble/release/SHA256SUMS', algo: 'sha256' },
  },
  'centos-stream-9': centos('9'),
  'centos-stream-10': centos('10'),
  'fedora-43': null,
  'fedora-44': null,
};

/** The `spec.downloads` id of a distro's cloud image. */
export function cloudImageId(distro: string): string {
  return `images/${distro}`;
}
