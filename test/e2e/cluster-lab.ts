// The real-cluster tier's hypervisor and deployer: one netns test host
// running a system-mode libvirtd (software emulation), on which kubemix's
// libvirt driver creates the guests, and the deployer — kubemix itself, the
// test's kubectl and its probes — inside that host's network namespace, as an
// operator who runs kubemix on the hypervisor does. The namespace has no
// default route: nothing the guests or the deployer send leaves the machine.
// The deployer resolves names through the services node's Bind (its own
// /etc/resolv.conf in a private mount namespace), so the API is reached by
// its name through HAProxy.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { readSpec } from '../../src/spec/read.js';
import { newStateDir, writeKnownHosts } from '../harness/fixture.js';
import { SystemLibvirtd } from '../harness/libvirt-system.js';
import { TestNet, type TestHost } from '../harness/netns.js';
import { startKubemix, type KubemixProcess, type KubemixRun, type RunOptions } from './kubemix.js';

/** The commands that reach the hosts over SSH and so take --known-hosts (`kubeconfig`, say, reads only the state). */
const SSH_COMMANDS: ReadonlySet<string> = new Set(['up', 'down', 'upgrade', 'patch', 'add-node', 'verify', 'diagnose']);

/** The hypervisor's own folders (definitions; pools and image cache), as in the libvirt driver's tier. */
export const PRIVATE = ['/var/lib/kubemix', '/var/lib/libvirt'];

export class ClusterLab {
  specFile = '';
  model: ClusterModel | undefined;
  readonly knownHosts: string;
  readonly state: string;
  /** The deployer's resolv.conf: the services node's Bind. */
  readonly resolvConf: string;
  private readonly background: ChildProcess[] = [];

  private constructor(
    readonly net: TestNet,
    readonly daemon: SystemLibvirtd,
  ) {
    this.knownHosts = writeKnownHosts(net);
    this.state = newStateDir(net);
    this.resolvConf = join(net.root, 'deployer-resolv.conf');
  }

  static async create(): Promise<ClusterLab> {
    const net = await TestNet.create(1, { privateDirs: PRIVATE });
    try {
      const images = join(net.privateDir(net.hosts[0] as TestHost, '/var/lib/libvirt'), 'images');
      mkdirSync(images, { recursive: true });
      const daemon = await SystemLibvirtd.start((net.hosts[0] as TestHost).ns, { images });
      return new ClusterLab(net, daemon);
    } catch (error) {
      await net.cleanup();
      throw error;
    }
  }

  get host(): TestHost {
    return this.net.hosts[0] ?? assert.fail('no hypervisor host');
  }

  /** Writes the spec (kubemix.dev/v1alpha1 Cluster) and resolves it; the deployer then resolves through its services node. */
  writeSpec(name: string, spec: Record<string, unknown>): ClusterModel {
    const text = stringify({ apiVersion: 'kubemix.dev/v1alpha1', kind: 'Cluster', metadata: { name }, spec });
    this.specFile = join(this.net.root, `${name}.yaml`);
    writeFileSync(this.specFile, text);
    this.model = resolveModel(readSpec({ kind: 'file', path: this.specFile, text }));
    const svc = this.model.nodes.find((n) => n.role === 'services');
    writeFileSync(this.resolvConf, `nameserver ${svc?.ip ?? '127.0.0.1'}\noptions timeout:2 attempts:2\n`);
    return this.model;
  }

  /** The hypervisor entry of the spec: reached over SSH at the test host, libvirt through its daemon's socket. */
  hypervisorSpec(): Record<string, unknown> {
    return {
      name: 'hv1',
      address: this.host.address,
      identityFile: this.net.clientKey,
      libvirtUri: this.daemon.uri,
      domainType: 'qemu',
    };
  }

  /** `kubemix COMMAND SPEC …` as the deployer on the hypervisor, with the tier's state directory and pinned keys. */
  start(command: string, extra: readonly string[] = [], options: RunOptions = {}): KubemixProcess {
    const keys = SSH_COMMANDS.has(command) ? ['--known-hosts', this.knownHosts] : [];
    const args = [command, this.specFile, '--state-dir', this.state, ...keys, '--json'];
    return startKubemix([...args, ...extra], {
      timeoutMs: 120 * 60_000,
      // kubemix's own SSH handshake timeout, not the quick VM tier's 5 s: three guests under software
      // emulation on two shared cores answered the handshake too late (the fourth run). And more attempts
      // than kubemix's 6 (docs/executor.md, for slow links): in run 11 the freshly booted one-CPU services
      // node, with the host's load at 12, did not open a session within 6 attempts (about 3 minutes).
      env: { KUBEMIX_SSH_CONNECT_TIMEOUT_MS: '', KUBEMIX_RETRY_ATTEMPTS: '12', KUBEMIX_RETRY_BASE_MS: '' },
      deployer: { netns: this.host.ns, resolvConf: this.resolvConf },
      ...options,
    });
  }

  kubemix(command: string, extra: readonly string[] = [], options: RunOptions = {}): Promise<KubemixRun> {
    return this.start(command, extra, options).done;
  }

  /** argv for a program run as the deployer (its namespace, its resolver). */
  private deployerArgv(argv: readonly string[]): string[] {
    const inner = 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"';
    return [
      'netns',
      'exec',
      this.host.ns,
      'unshare',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      inner,
      'sh',
      this.resolvConf,
      ...argv,
    ];
  }

  /** A program run as the deployer; throws with its output unless it exits 0 (or `allowFail`). */
  deployer(
    argv: readonly string[],
    options: { input?: string; timeoutMs?: number; allowFail?: boolean } = {},
  ): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync('ip', this.deployerArgv(argv), {
      encoding: 'utf8',
      input: options.input,
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const out = { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
    if (!options.allowFail && r.status !== 0)
      throw new Error(
        `${argv.join(' ')}: exit ${r.status ?? r.signal}\n${out.stdout.slice(-3000)}\n${out.stderr.slice(-3000)}`,
      );
    return out;
  }

  /** A long-running program as the deployer (a load generator), ended by cleanup if still running. */
  spawnDeployer(argv: readonly string[], stdoutFile: string): ChildProcess {
    const fd = openSync(stdoutFile, 'w');
    const child = spawn('ip', this.deployerArgv(argv), { stdio: ['ignore', fd, fd] });
    this.background.push(child);
    return child;
  }

  /** `ssh` run in the hypervisor's namespace, host key pinned, as argv for `ip`. */
  private sshArgv(ip: string, command: string): string[] {
    const opts = [
      `UserKnownHostsFile=${this.knownHosts}`,
      'StrictHostKeyChecking=yes',
      'BatchMode=yes',
      'ConnectTimeout=15',
      'LogLevel=ERROR',
    ];
    return [
      'netns',
      'exec',
      this.host.ns,
      'ssh',
      '-i',
      this.net.clientKey,
      ...opts.flatMap((o) => ['-o', o]),
      `root@${ip}`,
      command,
    ];
  }

  /** A command on a guest over the system ssh client, from the hypervisor, checking the keys kubemix pinned. */
  ssh(
    ip: string,
    command: string,
    options: { allowFail?: boolean; timeoutMs?: number } = {},
  ): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync('ip', this.sshArgv(ip, command), {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 180_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const out = { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
    if (!options.allowFail && r.status !== 0)
      throw new Error(
        `ssh ${ip} ${JSON.stringify(command)}: exit ${r.status ?? r.signal}\n${out.stdout.slice(-3000)}\n${out.stderr.slice(-3000)}`,
      );
    return out;
  }

  /**
   * Resolves once `condition` (a shell test) holds on the guest, polled every second *on the guest*
   * over one SSH session. Polling by a new login each second cost an emulated guest most of a host
   * core (sshd's key exchange, PAM, logind, a user manager: run 18's worker at 64–88 % of a core
   * while its join waited on the control plane, which those cycles were taken from). `signal` ends
   * the watch (the run it watches ended first).
   */
  untilOnGuest(ip: string, condition: string, limitMs: number, signal: AbortSignal): Promise<void> {
    const tries = Math.ceil(limitMs / 1000);
    const loop = `i=0; until ${condition}; do i=$((i+1)); [ "$i" -lt ${tries} ] || exit 1; sleep 1; done`;
    return new Promise((resolve, reject) => {
      const child = spawn('ip', this.sshArgv(ip, loop), { stdio: 'ignore', signal });
      this.background.push(child);
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`${condition} on ${ip}: not after ${limitMs / 1000} s (ssh exit ${code})`)),
      );
    });
  }

  /** A command in the hypervisor's namespace (its links, routes, processes). */
  inNs(cmd: string, args: readonly string[]): { status: number | null; stdout: string } {
    const r = spawnSync('ip', ['netns', 'exec', this.host.ns, cmd, ...args], { encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, stdout: r.stdout ?? '' };
  }

  async cleanup(): Promise<void> {
    for (const c of this.background) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    this.daemon.stop();
    await this.net.cleanup();
  }
}
