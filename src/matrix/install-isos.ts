// The install media a Windows guest of the libvirt driver boots from: the
// Windows Server evaluation ISO of each build (Microsoft Evaluation Center's
// stable download links, en-US: go.microsoft.com/fwlink ids 2195280 for
// 2022 and 2293312 for 2025) and the virtio-win driver ISO (the Fedora
// project's "stable-virtio" link, which always points at the current stable
// release). Neither vendor publishes a checksum list beside these links: a
// spec that pins `spec.downloads["images/<name>"].sha256` gets the file
// checked, otherwise it is taken as served (and the plan warns).

export interface InstallIso {
  readonly url: string;
}

export const INSTALL_ISOS: Readonly<Record<string, InstallIso>> = {
  'windows-2022': { url: 'https://go.microsoft.com/fwlink/p/?LinkID=2195280&clcid=0x409&culture=en-us&country=US' },
  'windows-2025': { url: 'https://go.microsoft.com/fwlink/?linkid=2293312&clcid=0x409&culture=en-us&country=US' },
  'virtio-win': {
    url: 'https://fedorapeople.org/groups/virt/virtio-win/direct-downloads/stable-virtio/virtio-win.iso',
  },
};

/** The virtio-win driver ISO's name in INSTALL_ISOS. */
export const VIRTIO_WIN = 'virtio-win';

/** The `spec.downloads` id of an install ISO (the same family as cloud images). */
export function installIsoId(name: string): string {
  return `images/${name}`;
}
