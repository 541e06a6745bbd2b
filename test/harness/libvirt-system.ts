// A system-mode libvirtd (root, qemu:///system) for tests, able to make what
// a session daemon cannot: bridges, NAT networks with their dnsmasq and
// iptables rules. It runs inside a test host's network namespace (so its
// bridges, dnsmasq and guests live there, where that host's tasks see
// them) and in a private mount namespace whose /etc/libvirt, /run/libvirt,
// /var/lib/libvirt, /var/log/libvirt and /var/cache/libvirt are this
// daemon's own folders: nothing of the machine's libvirt state is read or
// written. Only /var/lib/libvirt/images is the machine's (the driver's pools
// and image cache live there, and a test host's tasks write to it), unless
// the test gives the daemon a folder of its own for it (`images`: the same
// folder its test host's sshd sees there, TestNet's privateDirs), so two
// daemons on one machine never share a pool directory or image cache. Its
// socket lies in the test's folder (libvirtd.conf unix_sock_dir), so a
// task's `virsh -c 'qemu:///system?socket=…'` reaches it over the shared
// filesystem. A private /etc/passwd names Debian's libvirt-qemu user, which
// a system daemon resolves at start even when qemu.conf runs qemu as root.
// Everything it spawned is ended by pid, and lives in the test host's
// namespace, which TestNet.cleanup sweeps as well. Its pid file is in the
// test's folder too (a system daemon's default, /run/libvirtd.pid, would
// keep a second daemon from starting). The mount points themselves are the
// machine's: on a fresh machine, where apt installed libvirt but never started
// it, /run/libvirt, /var/log/libvirt and /var/cache/libvirt do not exist, so
// the daemon makes the missing ones and removes them (while empty and no other
// live test uses them) when it stops (test/harness/host-paths.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackHostPaths, type TrackedPaths } from './host-paths.js';
import { quiet } from './netns.js';
import { virsh, virshNames, waitForLibvirtd } from './virsh.js';

const BINARIES = [
  '/usr/sbin/libvirtd',
  '/usr/bin/virsh',
  '/usr/bin/qemu-system-x86_64',
  '/usr/sbin/dnsmasq',
  '/usr/bin/unshare',
];
export const LIBVIRT_IMAGES = '/var/lib/libvirt/images';
/** The machine's folders the daemon's own are mounted on, inside its private mount namespace. */
const MOUNT_POINTS = ['/etc/libvirt', '/var/lib/libvirt', '/run/libvirt', '/var/log/libvirt', '/var/cache/libvirt'];

export function systemLibvirtAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a system-mode libvirtd runs as root: start the tests as root';
  const missing = BINARIES.filter((b) => !existsSync(b));
  if (!existsSync('/usr/sbin/iptables')) missing.push('/usr/sbin/iptables');
  return missing.length === 0
    ? undefined
    : `missing ${missing.join(', ')} (libvirt-daemon, qemu-system-x86, dnsmasq, iptables)`;
}

// qemu as root with no security driver, cgroups or per-domain mount
// namespaces (a test machine's container may grant none of them); stdio
// to files, so no virtlogd is needed.
const QEMU_CONF = `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = []
cgroup_controllers = []
stdio_handler = "file"
`;

export class SystemLibvirtd {
  private stopped = false;
  private readonly exitHook = (): void => this.stop();

  private constructor(
    readonly root: string,
    readonly ns: string,
    private readonly child: ChildProcess,
    private readonly mountPoints: TrackedPaths,
  ) {
    process.on('exit', this.exitHook);
  }

  get uri(): string {
    return `qemu:///system?socket=${join(this.root, 'sock', 'libvirt-sock')}`;
  }

  /** `images`: the folder this daemon sees as /var/lib/libvirt/images (default: the machine's). */
  static async start(ns: string, options: { images?: string } = {}): Promise<SystemLibvirtd> {
    const images = options.images ?? LIBVIRT_IMAGES;
    const root = mkdtempSync(join(tmpdir(), 'kubemix-libvirtd-'));
    for (const d of ['etc', 'sock', 'run', 'lib', 'log', 'cache', 'images']) mkdirSync(join(root, d));
    writeFileSync(join(root, 'etc', 'qemu.conf'), QEMU_CONF);
    writeFileSync(
      join(root, 'etc', 'libvirtd.conf'),
      `unix_sock_dir = "${join(root, 'sock')}"\nunix_sock_rw_perms = "0700"\nauth_unix_rw = "none"\nauth_unix_ro = "none"\n`,
    );
    writeFileSync(
      join(root, 'passwd'),
      `${readFileSync('/etc/passwd', 'utf8')}libvirt-qemu:x:64055:64055::/var/lib/libvirt:/usr/sbin/nologin\n`,
    );
    writeFileSync(join(root, 'group'), `${readFileSync('/etc/group', 'utf8')}libvirt-qemu:x:64055:\n`);
    // Tracked before they are made, so that only what did not exist is removed.
    const mountPoints = trackHostPaths([], [...MOUNT_POINTS, images]);
    for (const d of [...MOUNT_POINTS, images]) mkdirSync(d, { recursive: true });
    const r = root;
    const inner = `set -e
mount --bind ${r}/passwd /etc/passwd
mount --bind ${r}/group /etc/group
mount --bind ${r}/etc /etc/libvirt
mount --bind ${images} ${r}/images
mount --bind ${r}/lib /var/lib/libvirt
mkdir -p /var/lib/libvirt/images
mount --bind ${r}/images /var/lib/libvirt/images
mount --bind ${r}/run /run/libvirt
mount --bind ${r}/log /var/log/libvirt
mount --bind ${r}/cache /var/cache/libvirt
exec /usr/sbin/libvirtd --config /etc/libvirt/libvirtd.conf --pid-file ${r}/libvirtd.pid --timeout 0
`;
    const child = spawn(
      'ip',
      ['netns', 'exec', ns, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', inner],
      {
        cwd: root,
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let log = '';
    child.stderr?.on('data', (c: Buffer) => void (log += c.toString()));
    const daemon = new SystemLibvirtd(root, ns, child, mountPoints);
    try {
      await daemon.waitReady(() => log);
      return daemon;
    } catch (error) {
      daemon.stop();
      throw error;
    }
  }

  private async waitReady(log: () => string): Promise<void> {
    await waitForLibvirtd(this.child, this.uri, log, 20);
  }

  virsh(...args: string[]): string {
    return virsh(this.uri, ...args);
  }

  /** Names from a `--name` listing, trimmed and sorted. */
  names(...args: string[]): string[] {
    return virshNames(this.uri, ...args);
  }

  /** Ends the daemon, then the qemu and dnsmasq processes it started (by their pid files), only those in its namespace. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    process.off('exit', this.exitHook);
    const pids = [join(this.root, 'run', 'qemu'), join(this.root, 'run', 'network')].flatMap((dir) =>
      existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.pid') && f !== 'driver.pid')
            .map((f) => Number(readFileSync(join(dir, f), 'utf8').trim()))
        : [],
    );
    if (this.child.pid !== undefined && this.child.exitCode === null) pids.unshift(this.child.pid);
    for (const pid of pids.filter((p) => this.inOurNamespace(p))) quiet('kill', ['-9', String(pid)]);
    rmSync(this.root, { recursive: true, force: true });
    this.mountPoints.cleanup();
  }

  /** A pid is ours only while it lives in the test host's network namespace (pids are reused). */
  private inOurNamespace(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 1) return false;
    try {
      const inode = statSync(`/run/netns/${this.ns}`).ino;
      return readlinkSync(`/proc/${pid}/ns/net`) === `net:[${inode}]`;
    } catch {
      return false;
    }
  }
}
