// A private containerd (the one gobuild built, from its release archive) on a
// socket in a scratch folder, with its own root and state, the CRI plugin off:
// `ctr` imports image archives into it and runs containers with the runc
// gobuild built. Stopped by pid; the shim socket folder it makes under
// /run/containerd is removed when it was not there before.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SHIM_SOCKETS = '/run/containerd/s';

export class Containerd {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly bin: string,
    private readonly socket: string,
    private readonly runc: string,
    private readonly madeSockets: readonly string[],
  ) {}

  /** containerd from BIN (containerd, containerd-shim-runc-v2, ctr), state under DIR. */
  static async start(dir: string, bin: string, runc: string): Promise<Containerd> {
    mkdirSync(dir, { recursive: true });
    const made = ['/run/containerd', SHIM_SOCKETS].filter((p) => !existsSync(p));
    const socket = join(dir, 'containerd.sock');
    const config = join(dir, 'config.toml');
    writeFileSync(
      config,
      [
        'version = 3',
        `root = "${join(dir, 'root')}"`,
        `state = "${join(dir, 'state')}"`,
        // Images and tasks only: no CRI, no NRI, no snapshotters this machine lacks.
        'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images",',
        '  "io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",',
        '  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs"]',
        '[grpc]',
        `  address = "${socket}"`,
        '[ttrpc]',
        `  address = "${socket}.ttrpc"`,
        "[plugins.'io.containerd.internal.v1.opt']",
        `  path = "${join(dir, 'opt')}"`,
        '',
      ].join('\n'),
    );
    const child = spawn(join(bin, 'containerd'), ['--config', config, '--log-level', 'warn'], {
      // The shim is found on PATH, as on a node where it sits beside containerd.
      env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString('utf8')).slice(-4000)));
    const c = new Containerd(child, dir, bin, socket, runc, made);
    for (let i = 0; i < 200; i += 1) {
      if (child.exitCode !== null) throw new Error(`containerd exited ${child.exitCode}: ${log}`);
      if (existsSync(socket) && c.ctrStatus(['version']).status === 0) return c;
      await new Promise((r) => setTimeout(r, 100));
    }
    await c.stop();
    throw new Error(`containerd did not answer on ${socket}: ${log}`);
  }

  private ctrStatus(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(join(this.bin, 'ctr'), ['--address', this.socket, '--namespace', 'k8s.io', ...args], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  ctr(args: readonly string[]): string {
    const r = this.ctrStatus(args);
    if (r.status !== 0) throw new Error(`ctr ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return r.stdout;
  }

  importArchive(file: string): void {
    this.ctr(['images', 'import', '--platform', 'linux/amd64', file]);
  }

  /** Image name → target digest. */
  images(): Map<string, string> {
    const out = this.ctr(['images', 'list']);
    return new Map(
      out
        .split('\n')
        .slice(1)
        .filter((l) => l.trim() !== '')
        .map((l) => l.trim().split(/\s+/))
        .map((f) => [f[0] ?? '', f[2] ?? '']),
    );
  }

  private runArgs(image: string, extra: readonly string[]): string[] {
    // runc's state and ctr's fifos in the scratch folder, not under /run/containerd.
    return [
      'run',
      '--rm',
      '--runc-binary',
      this.runc,
      '--runc-root',
      join(this.dir, 'runc'),
      '--fifo-dir',
      join(this.dir, 'fifo'),
      ...extra,
      image,
    ];
  }

  /** Runs ARGS in a container of IMAGE to the end; its output. */
  run(image: string, args: readonly string[], extra: readonly string[] = []): string {
    const id = `kubemix-e2e-${process.pid}-${Date.now()}`;
    return this.ctr([...this.runArgs(image, extra), id, ...args]);
  }

  /** Runs IMAGE's entrypoint, sends SIGNAL once its task runs; the container's exit status. */
  async runUntilSignalled(image: string, signal: string): Promise<number | null> {
    const id = `kubemix-e2e-${process.pid}-${Date.now()}`;
    const child = spawn(
      join(this.bin, 'ctr'),
      ['--address', this.socket, '--namespace', 'k8s.io', ...this.runArgs(image, []), id],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await this.untilRunning(id);
    this.ctr(['task', 'kill', '--signal', signal, id]);
    return exited;
  }

  /**
   * IMAGE with ARGS and HOSTFILE bound read-only at PATH, the capabilities DROP
   * taken from containerd's defaults; its output after four seconds (or once it
   * ended), then killed.
   */
  async runBriefly(
    image: string,
    args: readonly string[],
    hostFile: string,
    path: string,
    drop: readonly string[],
  ): Promise<string> {
    const id = `kubemix-e2e-${process.pid}-${Date.now()}`;
    const extra = [
      '--mount',
      `type=bind,src=${hostFile},dst=${path},options=rbind:ro`,
      ...drop.flatMap((c) => ['--cap-drop', c]),
    ];
    const child = spawn(
      join(this.bin, 'ctr'),
      ['--address', this.socket, '--namespace', 'k8s.io', ...this.runArgs(image, extra), id, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const ended = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 4000)),
    ]);
    if (!ended) {
      this.ctrStatus(['task', 'kill', '--signal', 'SIGKILL', id]);
      await exited;
    }
    return out;
  }

  private async untilRunning(id: string): Promise<void> {
    for (let i = 0; i < 200; i += 1) {
      const r = this.ctrStatus(['task', 'list']);
      if (r.stdout.split('\n').some((l) => l.startsWith(id) && l.includes('RUNNING'))) return;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`task ${id} never ran`);
  }

  async stop(): Promise<void> {
    if (this.child.pid !== undefined && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      process.kill(this.child.pid, 'SIGTERM');
      await exited;
    }
    for (const p of [...this.madeSockets].reverse()) {
      if (existsSync(p) && readdirSync(p).length === 0) rmdirSync(p);
    }
  }
}
