// A private libvirt daemon for tests: Debian's libvirtd in session mode, run
// as `nobody` with HOME and XDG directories in a temporary folder, so its
// sockets, domain and network definitions and logs touch nothing of the
// machine's (there is no system libvirtd here, and another one may run).
// Test hosts share this file system, so a task's `virsh -c URI` on a test
// host reaches it through the socket path in the URI. Everything it spawned
// (virtlogd, qemu) is ended by the pids in its own runtime directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quiet } from './netns.js';
import { virsh, virshNames, waitForLibvirtd } from './virsh.js';

const NOBODY = 65534;
const BINARIES = ['/usr/sbin/libvirtd', '/usr/bin/virsh', '/usr/bin/qemu-system-x86_64', '/usr/bin/setpriv'];

export function libvirtAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the private libvirt daemon runs as nobody: start the tests as root';
  const missing = BINARIES.filter((b) => !existsSync(b));
  return missing.length === 0
    ? undefined
    : `missing ${missing.join(', ')} (libvirt-daemon, libvirt-clients, qemu-system-x86)`;
}

export class LibvirtDaemon {
  private readonly exitHook = (): void => this.stopSync();
  private stopped = false;

  private constructor(
    readonly root: string,
    private readonly child: ChildProcess,
  ) {
    process.on('exit', this.exitHook);
  }

  /** virsh connection URI of this daemon. */
  get uri(): string {
    return `qemu:///session?socket=${join(this.runtimeDir, 'libvirt', 'libvirt-sock')}`;
  }

  private get runtimeDir(): string {
    return join(this.root, 'run');
  }

  /** A directory the daemon (nobody) may write to, e.g. a storage pool's target. */
  dir(name: string): string {
    const dir = join(this.root, 'home', name);
    mkdirSync(dir, { recursive: true });
    chownSync(dir, NOBODY, NOBODY);
    return dir;
  }

  static async start(): Promise<LibvirtDaemon> {
    const root = mkdtempSync(join(tmpdir(), 'kubemix-libvirt-'));
    chmodSync(root, 0o755);
    for (const d of ['home', 'run']) {
      mkdirSync(join(root, d), { mode: 0o700 });
      chownSync(join(root, d), NOBODY, NOBODY);
    }
    const env = {
      PATH: '/usr/sbin:/usr/bin:/bin',
      HOME: join(root, 'home'),
      XDG_RUNTIME_DIR: join(root, 'run'),
      XDG_CONFIG_HOME: join(root, 'home', '.config'),
      XDG_CACHE_HOME: join(root, 'home', '.cache'),
      XDG_DATA_HOME: join(root, 'home', '.local', 'share'),
    };
    // setpriv execs libvirtd: the child's pid is the daemon's.
    const child = spawn(
      'setpriv',
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '/usr/sbin/libvirtd', '--timeout', '0'],
      { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.stderr?.on('data', (c: Buffer) => void (log += c.toString()));
    const daemon = new LibvirtDaemon(root, child);
    try {
      await daemon.waitReady(() => log);
      return daemon;
    } catch (error) {
      daemon.stopSync();
      throw error;
    }
  }

  private async waitReady(log: () => string): Promise<void> {
    await waitForLibvirtd(this.child, this.uri, log, 15);
  }

  virsh(...args: string[]): string {
    return virsh(this.uri, ...args);
  }

  /** Names from a `--name` listing (`list --all --name`, `net-list --all --name`). */
  names(...args: string[]): string[] {
    return virshNames(this.uri, ...args);
  }

  async stop(): Promise<void> {
    this.stopSync();
  }

  /** Stops running domains, then ends the daemon, its virtlogd and any qemu left, each by pid. */
  stopSync(): void {
    if (this.stopped) return;
    this.stopped = true;
    process.off('exit', this.exitHook);
    try {
      for (const d of this.virsh('list', '--name').split('\n').filter(Boolean))
        quiet('virsh', ['-q', '-c', this.uri, 'destroy', '--domain', d]);
    } catch {
      // the daemon is gone already; the pid files below still name what it left
    }
    const pids = [
      ...this.pidFiles(join(this.runtimeDir, 'libvirt', 'qemu', 'run')),
      ...this.pidFiles(join(this.runtimeDir, 'libvirt')).filter((f) => f.endsWith('virtlogd.pid')),
    ].map((f) => Number(readFileSync(f, 'utf8').trim()));
    if (this.child.pid !== undefined && this.child.exitCode === null) pids.unshift(this.child.pid);
    for (const pid of pids.filter((p) => this.owns(p))) quiet('kill', ['-9', String(pid)]);
    rmSync(this.root, { recursive: true, force: true });
  }

  /** A pid from a pid file is ours only while that process still names our folder (pids are reused). */
  private owns(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 1) return false;
    try {
      return ['cmdline', 'environ'].some((f) => readFileSync(`/proc/${pid}/${f}`, 'utf8').includes(this.root));
    } catch {
      return false;
    }
  }

  private pidFiles(dir: string): string[] {
    return existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.pid') && f !== 'driver.pid' && f !== 'libvirtd.pid')
          .map((f) => join(dir, f))
      : [];
  }
}
