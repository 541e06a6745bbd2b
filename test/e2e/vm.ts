// Real VMs for the e2e tier: qemu with software emulation (
// /dev/kvm here is a PVM host that hangs ordinary guests) on a bridge of the
// test's own, in a /28 of 198.51.100.0/24 claimed like the netns test hosts,
// so both kinds of test can run side by side. Everything made here (qemu by
// pid, taps, the bridge, the claim, the scratch directory) is removed on
// cleanup, on failure and at process exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimBlock, quiet, releaseBlock, sh } from '../harness/netns.js';
import { baseImage, vmDisks, type BaseImage } from './image.js';

const MAX_VMS = 4;

export interface VmSpec {
  /** Host name, also the node name the test's spec uses. */
  readonly name: string;
  /** vCPUs; the control-plane validation wants at least 2. */
  readonly cpus?: number;
  readonly memoryMiB?: number;
  /** Ask for the address by DHCP instead of configuring it statically. */
  readonly dhcp?: boolean;
}

export interface Vm {
  readonly spec: VmSpec;
  readonly name: string;
  readonly address: string;
  readonly mac: string;
  readonly tap: string;
  readonly hostKeyFile: string;
  readonly consoleLog: string;
  qemu: ChildProcess | undefined;
}

export class VmNet {
  readonly vms: Vm[] = [];
  readonly root: string;
  readonly clientKey: string;
  readonly bridge: string;
  /** known_hosts with the pinned key of every VM defined so far. */
  readonly knownHosts: string;
  private cleaned = false;
  private readonly exitHook = (): void => this.cleanup();

  private constructor(
    readonly block: number,
    readonly base: BaseImage,
    private readonly log: (line: string) => void,
  ) {
    this.root = mkdtempSync(join(tmpdir(), 'kubemix-vms-'));
    this.clientKey = join(this.root, 'client_key');
    this.knownHosts = join(this.root, 'known_hosts');
    this.bridge = `kmbr${block}`;
    process.on('exit', this.exitHook);
  }

  get gateway(): string {
    return `198.51.100.${this.block * 16 + 1}`;
  }

  /** Builds (or reuses) the base image and makes the test's bridge; no VM yet. */
  static create(options: { log?: (line: string) => void } = {}): VmNet {
    const base = baseImage(options.log);
    const net = new VmNet(claimBlock(), base, options.log ?? (() => undefined));
    try {
      sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kubemix-e2e', '-f', net.clientKey]);
      writeFileSync(net.knownHosts, '');
      sh('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
      sh('ip', ['addr', 'add', `${net.gateway}/28`, 'dev', net.bridge]);
      sh('ip', ['link', 'set', net.bridge, 'up']);
      return net;
    } catch (error) {
      net.cleanup();
      throw error;
    }
  }

  /** A VM's address, MAC and pinned host key, before it boots (so specs can name it). */
  define(spec: VmSpec): Vm {
    const i = this.vms.length;
    if (i >= MAX_VMS) throw new Error(`at most ${MAX_VMS} VMs per net (tcg on this machine is slow)`);
    const octet = this.block * 16 + 2 + i;
    // Tap names follow the netns harness's veth names, so its sweep of a dead owner's block removes them too.
    const vm: Vm = {
      spec,
      name: spec.name,
      address: `198.51.100.${octet}`,
      mac: `52:54:00:c6:33:${octet.toString(16).padStart(2, '0')}`,
      tap: `km${this.block}v${i}`,
      hostKeyFile: join(this.root, `${spec.name}.host_key`),
      consoleLog: join(this.root, `${spec.name}.console.log`),
      qemu: undefined,
    };
    this.vms.push(vm);
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', spec.name, '-f', vm.hostKeyFile]);
    appendFileSync(this.knownHosts, `${this.knownHostsLine(vm)}\n`);
    return vm;
  }

  /** Boots the VMs and waits until each answers SSH at its planned address. */
  async start(vms: readonly Vm[], bootTimeoutMs = 240_000): Promise<void> {
    const started = Date.now();
    for (const vm of vms) this.boot(vm);
    await Promise.all(vms.map((vm) => this.waitForSsh(vm, bootTimeoutMs)));
    // sshd answers long before the boot is over under tcg; an operator's host would be booted.
    for (const vm of vms) this.ssh(vm, 'systemctl is-system-running --wait >/dev/null || true', bootTimeoutMs);
    this.log(`${vms.map((v) => v.name).join(', ')} booted after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  private boot(vm: Vm): void {
    const disks = vmDisks(this.base, this.root, {
      name: vm.name,
      address: vm.spec.dhcp === true ? undefined : vm.address,
      prefix: 28,
      gateway: this.gateway,
      authorizedKey: readFileSync(`${this.clientKey}.pub`, 'utf8'),
      hostKeyFile: vm.hostKeyFile,
    });
    quiet('ip', ['link', 'del', vm.tap]);
    sh('ip', ['tuntap', 'add', 'dev', vm.tap, 'mode', 'tap']);
    sh('ip', ['link', 'set', vm.tap, 'master', this.bridge, 'up']);
    const console = openSync(vm.consoleLog, 'a');
    const args = [
      '-accel',
      'tcg',
      '-smp',
      String(vm.spec.cpus ?? 1),
      '-m',
      String(vm.spec.memoryMiB ?? 1024),
      '-nographic',
      '-no-reboot',
      '-kernel',
      this.base.kernel,
      '-initrd',
      this.base.initrd,
      '-append',
      'root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=-1',
      '-drive',
      `file=${disks.overlay},if=virtio,format=qcow2`,
      '-drive',
      `file=${disks.seed},if=virtio,format=raw,readonly=on`,
      '-netdev',
      `tap,id=n0,ifname=${vm.tap},script=no,downscript=no`,
      '-device',
      `virtio-net-pci,netdev=n0,mac=${vm.mac}`,
    ];
    // setpriv execs qemu (same pid) with a parent-death signal: a test process killed with SIGKILL,
    // whose exit hook cannot run, takes its VMs with it instead of leaving them running.
    vm.qemu = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'qemu-system-x86_64', ...args], {
      stdio: ['ignore', console, console],
    });
    closeSync(console);
  }

  /** Runs a shell command on the VM as root over the system's ssh client (pinned key); its stdout. */
  ssh(vm: Vm, command: string, timeoutMs = 60_000): string {
    const options = [
      `UserKnownHostsFile=${this.knownHosts}`,
      'StrictHostKeyChecking=yes',
      'BatchMode=yes',
      'ConnectTimeout=10',
      'LogLevel=ERROR',
    ];
    const args = ['-i', this.clientKey, ...options.flatMap((o) => ['-o', o]), `root@${vm.address}`, command];
    const r = spawnSync('ssh', args, { encoding: 'utf8', timeout: timeoutMs });
    if (r.status !== 0)
      throw new Error(`ssh ${vm.name} ${JSON.stringify(command)}: exit ${r.status ?? r.signal}\n${r.stderr}`);
    return r.stdout;
  }

  /** Polls TCP 22 until the SSH banner arrives (the guest is up) or the deadline passes. */
  private async waitForSsh(vm: Vm, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (vm.qemu === undefined || vm.qemu.exitCode !== null || vm.qemu.signalCode !== null)
        throw new Error(`qemu of ${vm.name} exited; console:\n${this.consoleTail(vm)}`);
      if (await banner(vm.address)) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(
      `${vm.name} (${vm.address}) did not answer SSH within ${timeoutMs / 1000} s; console:\n${this.consoleTail(vm)}`,
    );
  }

  consoleTail(vm: Vm, lines = 40): string {
    return existsSync(vm.consoleLog)
      ? readFileSync(vm.consoleLog, 'utf8').split('\n').slice(-lines).join('\n')
      : '(no console log)';
  }

  /** known_hosts line for a VM's pinned key. */
  knownHostsLine(vm: Vm): string {
    const [type, key] = readFileSync(`${vm.hostKeyFile}.pub`, 'utf8').trim().split(' ');
    return `${vm.address} ${type} ${key}`;
  }

  cleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    process.off('exit', this.exitHook);
    for (const vm of this.vms) {
      const pid = vm.qemu?.pid;
      if (pid !== undefined && vm.qemu?.exitCode === null && vm.qemu.signalCode === null) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      quiet('ip', ['link', 'del', vm.tap]);
    }
    releaseBlock(this.block);
    rmSync(this.root, { recursive: true, force: true });
  }
}

function banner(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port: 22, timeout: 3000 });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('data', (d: Buffer) => done(d.toString().startsWith('SSH-')));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

export function vmsAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'VMs need root (taps, bridges)';
  for (const tool of [
    '/usr/bin/setpriv',
    '/usr/sbin/debootstrap',
    '/usr/bin/qemu-system-x86_64',
    '/usr/bin/qemu-img',
    '/usr/sbin/mkfs.ext4',
    '/usr/bin/ssh-keygen',
  ]) {
    if (!existsSync(tool)) return `${tool} is missing (scripts/apt-packages-e2e.txt)`;
  }
  return undefined;
}
