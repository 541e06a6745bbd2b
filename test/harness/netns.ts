// Test hosts: network namespaces on a private bridge, each with its own sshd,
// host key and authorized key, all made and removed by the test. Addresses
// come from 198.51.100.0/24 only, in /28 blocks claimed atomically so test
// files running in parallel never collide; a block whose owner died is swept.
import { prepareRootShellEtc, preparePrivateEtc, sshdInPrivateEtc, type BindMount } from './private-etc.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostConnection } from '../../src/model/types.js';
import { ORIGINALS_DIR } from '../../src/util/originals.js';
import { trackHostPaths, type TrackedPaths } from './host-paths.js';

const CLAIMS = '/run/kubemix-harness';
const MAX_HOSTS = 13;
/**
 * Every host keeps its own records of what uploads replaced: an upload as
 * root records there (src/util/originals.ts), and a test host's records must
 * not land on this machine. Their mount point is made here and tracked as a
 * shared host path, so the last test using it removes it (the suite's
 * leftover check); a test that makes a parent private (e2e: /var/lib/kubemix)
 * covers it already.
 */
function privateOriginals(dirs: readonly string[]): { dirs: string[]; tracked?: TrackedPaths } {
  if (dirs.some((d) => ORIGINALS_DIR === d || ORIGINALS_DIR.startsWith(`${d}/`))) return { dirs: [...dirs] };
  const tracked = trackHostPaths([], [ORIGINALS_DIR]);
  mkdirSync(ORIGINALS_DIR, { recursive: true, mode: 0o700 });
  return { dirs: [...dirs, ORIGINALS_DIR], tracked };
}

export interface TestHost {
  readonly name: string;
  readonly ns: string;
  readonly address: string;
  readonly veth: string;
  /** Local directory tasks of this host may touch (the same filesystem). */
  readonly dir: string;
  readonly configFile: string;
  readonly hostKeyFile: string;
  sshd: ChildProcess | undefined;
}

/** Runs a command, returning stdout; throws on a non-zero exit. */
export function sh(cmd: string, args: readonly string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs a command and ignores failure (cleanup). */
export function quiet(cmd: string, args: readonly string[]): void {
  try {
    sh(cmd, args);
  } catch {
    // best effort during cleanup
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Remove everything a block's owner left behind (its namespaces' processes are ours). */
function sweepBlock(k: number): void {
  for (const line of sh('ip', ['netns', 'list']).split('\n')) {
    const ns = line.split(' ')[0] ?? '';
    if (!ns.startsWith(`km${k}h`)) continue;
    for (const pid of sh('ip', ['netns', 'pids', ns]).split('\n').filter(Boolean)) quiet('kill', ['-9', pid]);
    quiet('ip', ['netns', 'del', ns]);
  }
  // A namespace is freed lazily by the kernel; its veth pair may outlive `netns del` for a while.
  for (const line of sh('ip', ['-o', 'link', 'show']).split('\n')) {
    const name = /^\d+: (km\d+v\d+)[@:]/.exec(line)?.[1];
    if (name !== undefined && name.startsWith(`km${k}v`)) quiet('ip', ['link', 'del', name]);
  }
  quiet('ip', ['link', 'del', `kmbr${k}`]);
}

/** A free /28 of 198.51.100.0/24 (block k: .16k+0 … .16k+15), held until releaseBlock(k). */
export function claimBlock(): number {
  mkdirSync(CLAIMS, { recursive: true, mode: 0o700 });
  for (let k = 1; k <= 15; k++) {
    const dir = join(CLAIMS, `block-${k}`);
    try {
      mkdirSync(dir);
    } catch {
      const owner = Number(readFileSync(join(dir, 'pid'), { encoding: 'utf8', flag: 'a+' }) || '0');
      if (owner === 0 || alive(owner)) continue;
      sweepBlock(k);
      rmSync(dir, { recursive: true, force: true });
      try {
        mkdirSync(dir);
      } catch {
        continue;
      }
    }
    writeFileSync(join(dir, 'pid'), String(process.pid));
    return k;
  }
  throw new Error('no free 198.51.100.0/24 test block (15 in use)');
}

/** Remove a block's links and bridge and give the claim back. */
export function releaseBlock(k: number): void {
  sweepBlock(k);
  rmSync(join(CLAIMS, `block-${k}`), { recursive: true, force: true });
}

export class TestNet {
  readonly hosts: TestHost[] = [];
  readonly root: string;
  readonly clientKey: string;
  readonly bridge: string;
  private cleaned = false;
  /** The records' mount point, when this net made it private (privateOriginals). */
  private originals: TrackedPaths | undefined;
  private readonly exitHook = (): void => this.cleanupSync();

  private constructor(readonly block: number) {
    this.root = mkdtempSync(join(tmpdir(), 'kubemix-hosts-'));
    this.clientKey = join(this.root, 'client_key');
    this.bridge = `kmbr${block}`;
    process.on('exit', this.exitHook);
  }

  /** Mounts that give every host's sshd a private /etc: root with /bin/sh, maybe a sudo user (private-etc.ts). */
  private privateEtc: BindMount[] = [];

  /**
   * Every host sees `hostsFile` as /etc/hosts (write it after create).
   * `privateHosts`: also a resolv.conf naming only 127.0.0.1, so no name
   * lookup leaves the test hosts.
   */
  static async create(
    count: number,
    options: { sudoUser?: string; privateHosts?: boolean; privateDirs?: readonly string[] } = {},
  ): Promise<TestNet> {
    if (count > MAX_HOSTS) throw new Error(`at most ${MAX_HOSTS} test hosts per net`);
    const net = new TestNet(claimBlock());
    try {
      const originals = privateOriginals(options.privateDirs ?? []);
      net.privateDirs = originals.dirs;
      net.originals = originals.tracked;
      net.privateEtc =
        options.sudoUser === undefined
          ? prepareRootShellEtc(net.root)
          : preparePrivateEtc(net.root, {
              name: options.sudoUser,
              uid: 64_000 + net.block,
              home: join(net.root, `home-${options.sudoUser}`),
            });
      // Always a private /etc/hosts: a task that writes the hosts block on a
      // test host must never reach the machine's own file.
      net.privateEtc.push(net.privateHostsFile());
      if (options.privateHosts === true) net.privateEtc.push(net.privateResolver());
      sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kubemix-test', '-f', net.clientKey]);
      sh('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
      sh('ip', ['addr', 'add', `${net.gateway}/28`, 'dev', net.bridge]);
      sh('ip', ['link', 'set', net.bridge, 'up']);
      mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
      for (let i = 0; i < count; i++) net.addHost(i);
      await Promise.all(net.hosts.map((h) => net.startSshd(h)));
      return net;
    } catch (error) {
      net.cleanupSync();
      throw error;
    }
  }

  /**
   * Machine directories each host sees as an empty one of its own (its
   * sshd's mount namespace): two "hypervisors" on one machine then keep
   * apart what a real one keeps on its own disk (definitions, pools, images).
   * The mount points must exist; the test makes and removes them.
   */
  private privateDirs: readonly string[] = [];

  /** Host `h`'s own copy of a private directory (privateDirs), under its dir. */
  privateDir(h: TestHost, target: string): string {
    return join(h.dir, 'private', target.replace(/^\/+/, '').replaceAll('/', '_'));
  }

  /** The /etc/hosts every host sees. */
  get hostsFile(): string {
    return join(this.root, 'private-etc', 'hosts');
  }

  private privateHostsFile(): BindMount {
    mkdirSync(join(this.root, 'private-etc'), { recursive: true });
    writeFileSync(this.hostsFile, '127.0.0.1 localhost\n');
    return { source: this.hostsFile, target: '/etc/hosts' };
  }

  private privateResolver(): BindMount {
    const resolv = join(this.root, 'private-etc', 'resolv.conf');
    writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
    return { source: resolv, target: '/etc/resolv.conf' };
  }

  get gateway(): string {
    return `198.51.100.${this.block * 16 + 1}`;
  }

  private addHost(i: number): void {
    const name = `host-${i + 1}`;
    const h: TestHost = {
      name,
      ns: `km${this.block}h${i}`,
      address: `198.51.100.${this.block * 16 + 2 + i}`,
      veth: `km${this.block}v${i}`,
      dir: join(this.root, name),
      configFile: join(this.root, `${name}.sshd_config`),
      hostKeyFile: join(this.root, `${name}.host_key`),
      sshd: undefined,
    };
    mkdirSync(h.dir, { recursive: true });
    quiet('ip', ['link', 'del', h.veth]);
    sh('ip', ['netns', 'add', h.ns]);
    this.hosts.push(h);
    sh('ip', ['link', 'add', h.veth, 'type', 'veth', 'peer', 'name', `${h.veth}p`]);
    sh('ip', ['link', 'set', `${h.veth}p`, 'netns', h.ns]);
    sh('ip', ['link', 'set', h.veth, 'master', this.bridge, 'up']);
    sh('ip', ['-n', h.ns, 'link', 'set', `${h.veth}p`, 'name', 'eth0']);
    sh('ip', ['-n', h.ns, 'addr', 'add', `${h.address}/28`, 'dev', 'eth0']);
    sh('ip', ['-n', h.ns, 'link', 'set', 'eth0', 'up']);
    sh('ip', ['-n', h.ns, 'link', 'set', 'lo', 'up']);
    this.newHostKey(h);
    writeFileSync(h.configFile, sshdConfig(h, `${this.clientKey}.pub`));
  }

  newHostKey(h: TestHost): void {
    rmSync(h.hostKeyFile, { force: true });
    rmSync(`${h.hostKeyFile}.pub`, { force: true });
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', h.name, '-f', h.hostKeyFile]);
  }

  startSshd(h: TestHost): Promise<void> {
    const own = this.privateDirs.map((target) => {
      const source = this.privateDir(h, target);
      mkdirSync(source, { recursive: true, mode: 0o755 });
      return { source, target };
    });
    const sshd = sshdInPrivateEtc([...this.privateEtc, ...own], ['-D', '-e', '-f', h.configFile]);
    const child = spawn('ip', ['netns', 'exec', h.ns, ...sshd], { stdio: ['ignore', 'ignore', 'pipe'] });
    h.sshd = child;
    return new Promise((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`sshd on ${h.name} did not start: ${log}`)), 5000);
      child.stderr?.on('data', (c: Buffer) => {
        log += c.toString();
        if (log.includes('Server listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`sshd on ${h.name} exited (${code}): ${log}`));
      });
    });
  }

  async stopSshd(h: TestHost): Promise<void> {
    const child = h.sshd;
    h.sshd = undefined;
    if (!child || child.exitCode !== null || child.pid === undefined) return;
    child.removeAllListeners('exit');
    const gone = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await gone;
  }

  /** known_hosts line for a host's current key (as `kubemix` would pin it). */
  knownHostsLine(h: TestHost): string {
    const [type, key] = readFileSync(`${h.hostKeyFile}.pub`, 'utf8').trim().split(' ');
    return `${h.address} ${type} ${key}`;
  }

  connection(h: TestHost, extra: Partial<HostConnection> = {}): HostConnection {
    return {
      name: h.name,
      address: h.address,
      port: 22,
      user: 'root',
      identityFile: this.clientKey,
      shell: 'sh',
      provisioner: 'user',
      ...extra,
    };
  }

  link(h: TestHost, state: 'up' | 'down'): void {
    sh('ip', ['link', 'set', h.veth, state]);
  }

  /** Command lines of every process visible in a host's namespace. */
  processTable(h: TestHost): string {
    return sh('ip', ['netns', 'exec', h.ns, 'ps', '-eo', 'args']);
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.hosts.map((h) => this.stopSshd(h).catch(() => undefined)));
    this.cleanupSync();
  }

  cleanupSync(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    process.off('exit', this.exitHook);
    for (const h of this.hosts) {
      if (h.sshd?.pid !== undefined && h.sshd.exitCode === null) quiet('kill', ['-9', String(h.sshd.pid)]);
    }
    sweepBlock(this.block);
    this.originals?.cleanup();
    rmSync(this.root, { recursive: true, force: true });
    rmSync(join(CLAIMS, `block-${this.block}`), { recursive: true, force: true });
  }
}

function sshdConfig(h: TestHost, authorizedKeys: string): string {
  return [
    `ListenAddress ${h.address}`,
    'Port 22',
    `HostKey ${h.hostKeyFile}`,
    `AuthorizedKeysFile ${authorizedKeys}`,
    'PidFile none',
    'UsePAM no',
    'StrictModes no',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'MaxSessions 64',
    'MaxStartups 100',
    'AllowTcpForwarding yes',
    'LogLevel INFO',
    '',
  ].join('\n');
}

export function harnessAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'test hosts need root (network namespaces)';
  if (!existsSync('/usr/sbin/sshd')) return 'openssh-server is not installed';
  return undefined;
}
