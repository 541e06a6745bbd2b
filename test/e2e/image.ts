// VM disk images for the e2e tier. One Debian 12 base (debootstrap minbase +
// the cloud kernel) is built once per recipe and cached; every VM then gets a
// qcow2 overlay over it (so guests never write the shared base) and a tiny
// "seed" disk with its own host key, the test's authorized key and its static
// address, copied into place by a unit baked into the base before sshd and
// networking start. No loop mounts anywhere: `mkfs.ext4 -d` fills the images.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export const CACHE = process.env['KUBEMIX_E2E_CACHE'] ?? '/var/cache/kubemix-e2e';
const MIRROR = 'http://deb.debian.org/debian';
const SUITE = 'bookworm';
const BOOT = [
  'systemd-sysv',
  'dbus',
  'openssh-server',
  'ifupdown',
  'isc-dhcp-client',
  'iproute2',
  'sudo',
  'linux-image-cloud-amd64',
];
/**
 * What kubemix's tasks would install with apt-get: the VMs have no route to a
 * Debian mirror, so the image brings them (the tasks' checks then find them
 * installed). Services node: HAProxy, Bind, dnsmasq, the registry, htpasswd,
 * openssl, nginx (the download cache). Host prep: download tools, modprobe,
 * sysctl, timesyncd.
 */
const TASK_PACKAGES = [
  'haproxy',
  'nginx',
  'bind9',
  'bind9-utils',
  'dnsmasq',
  'docker-registry',
  'apache2-utils',
  'openssl',
  'ca-certificates',
  'curl',
  'gpg',
  'tar',
  'kmod',
  'procps',
  'systemd-timesyncd',
  // ping (don't-fragment probes) and python3 (the UDP listener) of the underlay checks: in every cloud image, not in minbase.
  'iputils-ping',
  'python3',
];
/**
 * What a test turns on in one VM to see kubemix deal with it: a running
 * firewalld; `nft`, with which the verify test drops UDP 4789 on one VM.
 * Installed with apt-get in the chroot after debootstrap, whose own
 * dependency resolution gives up on firewalld's alternatives.
 */
export const TEST_PACKAGES = ['firewalld', 'nftables'];
const PACKAGES = [...BOOT, ...TASK_PACKAGES];
/** Installed but off at boot: kubemix's tasks configure, enable and start them (timesyncd: `timedatectl set-ntp true`); firewalld only where a test starts it. */
const DISABLED_UNITS = [
  'haproxy.service',
  'nginx.service',
  'named.service',
  'dnsmasq.service',
  'docker-registry.service',
  'systemd-timesyncd.service',
  'firewalld.service',
];
/** Boot-time chores that cost tens of seconds under tcg and matter nothing to a test VM. */
const MASKED_UNITS = ['e2scrub_reap.service', 'e2scrub_all.timer'];
/** Room for what later tasks install; the file is sparse, so unused space costs nothing. */
const BASE_SIZE = '4G';

/** Copies the per-VM files from the seed disk (vdb) before anything reads them. */
const SEED_UNIT = `[Unit]
Description=kubemix e2e: per-VM files from the seed disk
DefaultDependencies=no
Requires=dev-vdb.device
After=dev-vdb.device systemd-remount-fs.service
Before=networking.service ssh.service systemd-hostnamed.service network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'mkdir -p /run/kubemix-seed && mount -o ro /dev/vdb /run/kubemix-seed && cp -a /run/kubemix-seed/root/. / && umount /run/kubemix-seed && hostname -F /etc/hostname'

[Install]
WantedBy=multi-user.target
`;

/** Only the pinned, seeded ed25519 key: a stray key type would make pinning ambiguous. */
const SSHD_DROPIN =
  'HostKey /etc/ssh/ssh_host_ed25519_key\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n';

export interface BaseImage {
  readonly disk: string;
  readonly kernel: string;
  readonly initrd: string;
}

/** Everything that shapes the base: a change here yields a new cache entry. */
export function recipeHash(): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        MIRROR,
        SUITE,
        PACKAGES,
        TEST_PACKAGES,
        DISABLED_UNITS,
        MASKED_UNITS,
        BASE_SIZE,
        SEED_UNIT,
        SSHD_DROPIN,
        v: 1,
      }),
    )
    .digest('hex')
    .slice(0, 16);
}

export function run(cmd: string, args: readonly string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/** The cached base, built (a few minutes, once) when absent. */
export function baseImage(log: (line: string) => void = () => undefined): BaseImage {
  const dir = join(CACHE, `base-${recipeHash()}`);
  cached(dir, log, (work, rootfs) => {
    bootstrap(rootfs, TEST_PACKAGES);
    customize(rootfs);
    copyFileSync(bootFile(rootfs, 'vmlinuz-'), join(work, 'vmlinuz'));
    copyFileSync(bootFile(rootfs, 'initrd.img-'), join(work, 'initrd.img'));
    run('mkfs.ext4', ['-q', '-F', '-L', 'kubemix-root', '-d', rootfs, join(work, 'root.img'), BASE_SIZE]);
  });
  return { disk: join(dir, 'root.img'), kernel: join(dir, 'vmlinuz'), initrd: join(dir, 'initrd.img') };
}

/**
 * Builds a cache entry in `dir` once: `build(work, rootfs)` fills a work
 * directory beside it, renamed into place when done, so a killed build never
 * looks complete; the debootstrap root is removed after the build.
 */
export function cached(dir: string, log: (line: string) => void, build: (work: string, rootfs: string) => void): void {
  if (existsSync(join(dir, 'complete'))) return;
  mkdirSync(CACHE, { recursive: true });
  const work = `${dir}.build-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const started = Date.now();
    log(`debootstrap ${SUITE} minbase for ${dir}`);
    build(work, join(work, 'rootfs'));
    rmSync(join(work, 'rootfs'), { recursive: true, force: true });
    const seconds = Math.round((Date.now() - started) / 1000);
    writeFileSync(join(work, 'complete'), `${new Date().toISOString()} built in ${seconds} s\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    log(`image cached in ${dir} (${seconds} s)`);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** debootstrap of the common packages, then `extra` with apt-get (whose resolver copes with alternatives). */
export function bootstrap(rootfs: string, extra: readonly string[]): void {
  try {
    run('debootstrap', ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, rootfs, MIRROR]);
  } catch (error) {
    // debootstrap says why in its own log, not on stderr.
    const logFile = join(rootfs, 'debootstrap', 'debootstrap.log');
    const tail = existsSync(logFile)
      ? readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n')
      : '(no debootstrap.log)';
    throw new Error(`debootstrap failed:\n${tail}`, { cause: error });
  }
  aptInstall(rootfs, extra);
}

/** The newest `/boot/<prefix>*` of the built root (kernel, initrd). */
export function bootFile(rootfs: string, prefix: string): string {
  const boot = join(rootfs, 'boot');
  const found = readdirSync(boot)
    .filter((f) => f.startsWith(prefix))
    .sort();
  if (found.length === 0) throw new Error(`no ${prefix}* in the debootstrap root's /boot`);
  return join(boot, found[found.length - 1] as string);
}

/** apt-get in the built root (the host's resolver for the mirror; no service starts: policy-rc.d). */
function aptInstall(rootfs: string, packages: readonly string[]): void {
  const policy = join(rootfs, 'usr/sbin/policy-rc.d');
  writeFileSync(policy, '#!/bin/sh\nexit 101\n');
  chmodSync(policy, 0o755);
  copyFileSync('/etc/resolv.conf', join(rootfs, 'etc/resolv.conf'));
  try {
    run('chroot', [rootfs, 'apt-get', 'update', '-qq']);
    run('chroot', [
      rootfs,
      'env',
      'DEBIAN_FRONTEND=noninteractive',
      'apt-get',
      'install',
      '-y',
      '-qq',
      '--no-install-recommends',
      ...packages,
    ]);
    run('chroot', [rootfs, 'apt-get', 'clean']);
  } finally {
    rmSync(policy, { force: true });
    rmSync(join(rootfs, 'etc/resolv.conf'), { force: true });
    rmSync(join(rootfs, 'var/lib/apt/lists'), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
  }
}

function customize(rootfs: string): void {
  const put = putter(rootfs);
  prepareRoot(rootfs);
  put('etc/ssh/sshd_config.d/kubemix-e2e.conf', SSHD_DROPIN);
  put('etc/systemd/system/kubemix-seed.service', SEED_UNIT);
  const wants = join(rootfs, 'etc/systemd/system/multi-user.target.wants');
  mkdirSync(wants, { recursive: true });
  symlinkSync('/etc/systemd/system/kubemix-seed.service', join(wants, 'kubemix-seed.service'));
  put('etc/fstab', '/dev/vda / ext4 defaults,errors=remount-ro 0 1\n');
  put('etc/hostname', 'kubemix-e2e\n');
}

/** Writes a file below `rootfs` (its folders made) with a mode. */
export function putter(rootfs: string): (path: string, text: string, mode?: number) => void {
  return (path, text, mode = 0o644) => {
    mkdirSync(join(rootfs, path, '..'), { recursive: true });
    writeFileSync(join(rootfs, path), text);
    chmodSync(join(rootfs, path), mode);
  };
}

/** What every image of the tier shares: no package-time host keys, the services off, ifupdown's includes, no caches. */
export function prepareRoot(rootfs: string): void {
  const put = putter(rootfs);
  // Keys generated at package install would be shared by every VM: each VM brings its own.
  for (const f of readdirSync(join(rootfs, 'etc/ssh')).filter((f) => f.startsWith('ssh_host_')))
    rmSync(join(rootfs, 'etc/ssh', f));
  run('chroot', [rootfs, 'systemctl', 'disable', '--quiet', ...DISABLED_UNITS]);
  run('chroot', [rootfs, 'systemctl', 'mask', '--quiet', ...MASKED_UNITS]);
  // An empty machine-id makes systemd generate one per VM at first boot.
  put('etc/machine-id', '');
  put('etc/network/interfaces', 'auto lo\niface lo inet loopback\nsource /etc/network/interfaces.d/*\n');
  // No package index in the image (the VMs have no route to a mirror unless a test gives them one).
  rmSync(join(rootfs, 'var/cache/apt/archives'), { recursive: true, force: true });
  mkdirSync(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
}

export interface VmDiskSpec {
  readonly name: string;
  /** Static address; undefined: the VM asks by DHCP. */
  readonly address: string | undefined;
  readonly prefix: number;
  readonly gateway: string;
  readonly authorizedKey: string;
  /** Private ed25519 host key file (its .pub beside it) the VM must present. */
  readonly hostKeyFile: string;
}

export interface VmDisks {
  readonly overlay: string;
  readonly seed: string;
}

/** A VM's writable overlay and seed disk, in `dir`. */
export function vmDisks(base: BaseImage, dir: string, vm: VmDiskSpec): VmDisks {
  mkdirSync(dir, { recursive: true });
  const overlay = join(dir, `${vm.name}.qcow2`);
  run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base.disk, '-F', 'raw', overlay]);
  const stage = join(dir, `${vm.name}-seed`);
  const root = join(stage, 'root');
  const put = (path: string, text: string, mode = 0o644): void => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
    chmodSync(join(root, path), mode);
  };
  put('etc/ssh/ssh_host_ed25519_key', readFileSync(vm.hostKeyFile, 'utf8'), 0o600);
  put('etc/ssh/ssh_host_ed25519_key.pub', readFileSync(`${vm.hostKeyFile}.pub`, 'utf8'));
  put('root/.ssh/authorized_keys', `${vm.authorizedKey.trim()}\n`, 0o600);
  chmodSync(join(root, 'root/.ssh'), 0o700);
  put('etc/hostname', `${vm.name}\n`);
  put('etc/hosts', `127.0.0.1 localhost\n${vm.address === undefined ? '' : `${vm.address} ${vm.name}\n`}`);
  put(
    'etc/network/interfaces.d/eth0',
    vm.address === undefined
      ? 'auto eth0\niface eth0 inet dhcp\n'
      : `auto eth0\niface eth0 inet static\n  address ${vm.address}/${vm.prefix}\n  gateway ${vm.gateway}\n`,
  );
  const seed = join(dir, `${vm.name}-seed.img`);
  run('mkfs.ext4', ['-q', '-F', '-d', stage, seed, '8M']);
  rmSync(stage, { recursive: true, force: true });
  return { overlay, seed };
}
