// Real VMs for the e2e tier: qemu with software emulation (REFERENCE.md §9:
// /dev/kvm here is a PVM host that hangs ordinary guests) on a bridge of the
// test's own, in a /28 of 198.51.100.0/24 claimed like the netns test hosts,
// so both kinds of test can run side by side. Everything made here (qemu by
// pid, taps, the bridge, the claim, the scratch directory) is removed on
// cleanup, on failure and at process exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimBlock, quiet, releaseBlock, sh } from '../harness/netns.js';
import { baseImage, vmDisks, type BaseImage } from './image.js';

const MAX_VMS = 4;

export interface VmOptions {
  /** vCPUs; the control-plane validation wants at least 2. */
  readonly cpus?: number;
  readonly memoryMiB?: number;
}

export interface Vm {
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
  private cleaned = false;
  private readonly exitHook = (): void => this.cleanup();

  private constructor(readonly block: number, readonly base: BaseImage) {
    this.root = mkdtempSync(join(tmpdir(), 'kubemix-vms-'));
    this.clientKey = join(this.root, 'client_key');
    this.bridge = `kmbr${block}`;
    process.on('exit', this.exitHook);
  }

  get gateway(): string {
    return `198.51.100.${this.block * 16 + 1}`;
  }

  /** Builds (or reuses) the base image, boots `count` VMs and waits until each answers SSH. */
  static async create(count: number, options: VmOptions & { bootTimeoutMs?: number; log?: (line: string) => void } = {}): Promise<VmNet> {
    if (count > MAX_VMS) throw new Error(`at most ${MAX_VMS} VMs per net (tcg on this machine is slow)`);
    const base = baseImage(options.log);
    const net = new VmNet(claimBlock(), base);
    try {
      sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kubemix-e2e', '-f', net.clientKey]);
      sh('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
      sh('ip', ['addr', 'add', `${net.gateway}/28`, 'dev', net.bridge]);
      sh('ip', ['link', 'set', net.bridge, 'up']);
      for (let i = 0; i < count; i++) net.boot(i, options);
      const timeout = options.bootTimeoutMs ?? 240_000;
      await Promise.all(net.vms.map((vm) => net.waitForSsh(vm, timeout)));
      return net;
    } catch (error) {
      net.cleanup();
      throw error;
    }
  }

  private boot(i: number, options: VmOptions): void {
    const octet = this.block * 16 + 2 + i;
    const name = `vm-${i + 1}`;
    // Tap names follow the netns harness's veth names, so its sweep of a dead owner's block removes them too.
    const vm: Vm = { name, address: `198.51.100.${octet}`, mac: `52:54:00:c6:33:${octet.toString(16).padStart(2, '0')}`, tap: `km${this.block}v${i}`, hostKeyFile: join(this.root, `${name}.host_key`), consoleLog: join(this.root, `${name}.console.log`), qemu: undefined };
    this.vms.push(vm);
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', vm.hostKeyFile]);
    const disks = vmDisks(this.base, this.root, { name, address: vm.address, prefix: 28, gateway: this.gateway, authorizedKey: readFileSync(`${this.clientKey}.pub`, 'utf8'), hostKeyFile: vm.hostKeyFile });
    quiet('ip', ['link', 'del', vm.tap]);
    sh('ip', ['tuntap', 'add', 'dev', vm.tap, 'mode', 'tap']);
    sh('ip', ['link', 'set', vm.tap, 'master', this.bridge, 'up']);
    const console = openSync(vm.consoleLog, 'a');
    const args = [
      '-accel', 'tcg', '-smp', String(options.cpus ?? 2), '-m', String(options.memoryMiB ?? 2048), '-nographic', '-no-reboot',
      '-kernel', this.base.kernel, '-initrd', this.base.initrd,
      '-append', 'root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=-1',
      '-drive', `file=${disks.overlay},if=virtio,format=qcow2`,
      '-drive', `file=${disks.seed},if=virtio,format=raw,readonly=on`,
      '-netdev', `tap,id=n0,ifname=${vm.tap},script=no,downscript=no`,
      '-device', `virtio-net-pci,netdev=n0,mac=${vm.mac}`,
    ];
    // setpriv execs qemu (same pid) with a parent-death signal: a test process killed with SIGKILL,
    // whose exit hook cannot run, takes its VMs with it instead of leaving them running.
    vm.qemu = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'qemu-system-x86_64', ...args], { stdio: ['ignore', console, console] });
    closeSync(console);
  }

  /** Polls TCP 22 until the SSH banner arrives (the guest is up) or the deadline passes. */
  private async waitForSsh(vm: Vm, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (vm.qemu === undefined || vm.qemu.exitCode !== null || vm.qemu.signalCode !== null) throw new Error(`qemu of ${vm.name} exited; console:\n${this.consoleTail(vm)}`);
      if (await banner(vm.address)) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(`${vm.name} (${vm.address}) did not answer SSH within ${timeoutMs / 1000} s; console:\n${this.consoleTail(vm)}`);
  }

  consoleTail(vm: Vm, lines = 40): string {
    return existsSync(vm.consoleLog) ? readFileSync(vm.consoleLog, 'utf8').split('\n').slice(-lines).join('\n') : '(no console log)';
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
  for (const tool of ['/usr/bin/setpriv', '/usr/sbin/debootstrap', '/usr/bin/qemu-system-x86_64', '/usr/bin/qemu-img', '/usr/sbin/mkfs.ext4', '/usr/bin/ssh-keygen']) {
    if (!existsSync(tool)) return `${tool} is missing (scripts/apt-packages-e2e.txt)`;
  }
  return undefined;
}
