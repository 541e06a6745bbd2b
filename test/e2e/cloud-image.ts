// The e2e tier's Debian 12 cloud image: the base image's packages (those
// kubemix's tasks would install included) plus cloud-init, laid out the way
// a vendor's cloud image is, so the libvirt driver can boot it unchanged: a
// qcow2 disk with an MBR, a small FAT partition holding SYSLINUX, the kernel
// and initrd, and the ext4 root (label kubemix-root). cloud-init configures
// each guest from the driver's NoCloud seed (host name, the deployer's key,
// the pinned host key, the network); no per-VM files are baked in. No loop
// mounts: `mkfs.ext4 -d`, mtools and `syslinux --install` work on files.
// Built once per recipe into the cache, beside the base.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootFile, bootstrap, CACHE, cached, prepareRoot, putter, recipeHash, run, TEST_PACKAGES } from './image.js';

/**
 * cloud-init (NoCloud), growpart for the driver's larger disk, udev for the
 * seed's label, and locales: cloud-init's locale module (on by default) runs
 * update-locale, which minbase lacks (the module then fails the boot's
 * cloud-config stage).
 */
const CLOUD_PACKAGES = ['cloud-init', 'cloud-guest-utils', 'udev', 'fdisk', 'locales'];
/**
 * What upstream's kubelet package depends on beside util-linux and mount
 * (kubernetes/release, the kubelet.spec template its deb and rpm are built
 * from: iptables, iproute2, socat, ethtool, ebtables, conntrack): guests
 * have no route to a mirror, so a kubelet installed from the download cache
 * finds them here, as it would on any distribution's cloud image with them
 * installed. kubeadm's own preflight needs only losetup, mount and cp
 * (cmd/kubeadm/app/preflight/checks_linux.go, 1.35 and 1.36), all in minbase.
 */
const KUBELET_HOST_PACKAGES = ['iptables', 'socat', 'ethtool', 'ebtables', 'conntrack'];
/** cloud-init's default locale, generated once here rather than by every guest's first boot (slow under tcg). */
const LOCALE = 'en_US.UTF-8';
/** Virtual size of the image; the driver's overlay is as large as the node's disk and growpart fills it. */
const DISK_MIB = 3072;
const BOOT_MIB = 64;
/**
 * What Debian's cloud images put on the kernel command line (the serial console), and
 * `tsc=reliable`, which this image is built for: under software emulation every vCPU reads the
 * one host TSC (qemu keeps it monotonic across vCPUs), but with two or more vCPUs of a non-Intel
 * model (libvirt's default qemu64 says AuthenticAMD, and tcg cannot offer invtsc) the kernel
 * calls the TSC unsynchronized and falls back to HPET: every clock read is then a system call
 * and an emulated device read under qemu's global lock. Go programs read the clock on every
 * scheduling decision; measured in a two-vCPU guest (`npm run bench:guest-clock`, docs/e2e.md,
 * "The clock under emulation"): 100 Go tickers 1.91 s with HPET, 0.21 s with the TSC. A vendor
 * image under emulation would want the same parameter (docs/linux-and-services.md, "Slow machines").
 */
const CMDLINE = 'root=LABEL=kubemix-root ro console=tty0 console=ttyS0,115200 tsc=reliable';
const SYSLINUX_CFG = `DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL vmlinuz
  INITRD initrd.img
  APPEND ${CMDLINE}
`;
/** SYSLINUX's boot sector for an MBR disk (syslinux-common). */
const MBR = '/usr/lib/syslinux/mbr/mbr.bin';

export interface CloudImage {
  /** The qcow2 file, for `spec.downloads."images/debian-12".url` as file://. */
  readonly file: string;
  readonly sha256: string;
}

function cloudHash(): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        base: recipeHash(),
        CLOUD_PACKAGES,
        KUBELET_HOST_PACKAGES,
        LOCALE,
        DISK_MIB,
        BOOT_MIB,
        SYSLINUX_CFG,
        v: 1,
      }),
    )
    .digest('hex')
    .slice(0, 16);
}

export function cloudImageAvailable(): string | undefined {
  for (const tool of ['/usr/bin/syslinux', MBR, '/usr/bin/mcopy', '/usr/sbin/mkfs.fat', '/usr/sbin/sfdisk']) {
    if (!existsSync(tool)) return `${tool} is missing (scripts/apt-packages-e2e.txt)`;
  }
  return undefined;
}

/** The cached cloud image, built (debootstrap: minutes) when absent. */
export function cloudImage(log: (line: string) => void = () => undefined): CloudImage {
  const dir = join(CACHE, `cloud-${cloudHash()}`);
  cached(dir, log, (work, rootfs) => {
    bootstrap(rootfs, [...TEST_PACKAGES, ...CLOUD_PACKAGES, ...KUBELET_HOST_PACKAGES]);
    prepareRoot(rootfs);
    const put = putter(rootfs);
    put('etc/fstab', 'LABEL=kubemix-root / ext4 defaults,errors=remount-ro 0 1\n');
    put('etc/hostname', 'debian\n');
    put('etc/locale.gen', `${LOCALE} UTF-8\n`);
    run('chroot', [rootfs, 'locale-gen']);
    put('etc/default/locale', `LANG=${LOCALE}\n`);
    assemble(work, rootfs);
    writeFileSync(join(work, 'disk.qcow2.sha256'), `${sha256File(join(work, 'disk.qcow2'))}\n`);
  });
  return { file: join(dir, 'disk.qcow2'), sha256: readFileSync(join(dir, 'disk.qcow2.sha256'), 'utf8').trim() };
}

/** MBR + FAT (SYSLINUX, kernel, initrd) + ext4 root in a raw file, converted to qcow2. */
function assemble(work: string, rootfs: string): void {
  const raw = join(work, 'disk.raw');
  const boot = join(work, 'boot.fat');
  const root = join(work, 'root.ext4');
  const rootMiB = DISK_MIB - 1 - BOOT_MIB;
  run('truncate', ['-s', `${DISK_MIB}M`, raw]);
  const table = `label: dos\nstart=1MiB, size=${BOOT_MIB}MiB, type=c, bootable\nstart=${1 + BOOT_MIB}MiB, type=83\n`;
  writeFileSync(join(work, 'table'), table);
  run('sh', ['-c', `sfdisk -q "$1" < "$2"`, 'sfdisk', raw, join(work, 'table')]);
  run('mkfs.fat', ['-C', '-n', 'KUBEMIXBOOT', boot, String(BOOT_MIB * 1024)]);
  writeFileSync(join(work, 'syslinux.cfg'), SYSLINUX_CFG);
  const files = [
    [bootFile(rootfs, 'vmlinuz-'), 'vmlinuz'],
    [bootFile(rootfs, 'initrd.img-'), 'initrd.img'],
    [join(work, 'syslinux.cfg'), 'syslinux.cfg'],
  ];
  for (const [from, to] of files) run('mcopy', ['-i', boot, from ?? '', `::/${to ?? ''}`]);
  run('syslinux', ['--install', boot]);
  run('mkfs.ext4', ['-q', '-F', '-L', 'kubemix-root', '-d', rootfs, root, `${rootMiB}M`]);
  run('dd', [`if=${boot}`, `of=${raw}`, 'bs=1M', 'seek=1', 'conv=notrunc,sparse', 'status=none']);
  run('dd', [`if=${root}`, `of=${raw}`, 'bs=1M', `seek=${1 + BOOT_MIB}`, 'conv=notrunc,sparse', 'status=none']);
  run('dd', [`if=${MBR}`, `of=${raw}`, 'bs=440', 'count=1', 'conv=notrunc', 'status=none']);
  run('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, join(work, 'disk.qcow2')]);
  for (const f of [raw, boot, root]) run('rm', ['-f', f]);
}

function sha256File(path: string): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(path));
  return hash.digest('hex');
}
