// The Kubernetes binaries built here from the Go module proxy (gobuild/), as
// scripts/kube-binaries.sh lists them in dist/kube-binaries.json: `npm test`
// builds them first (once per machine; cached) and writes the file. A test run
// on its own that finds no file runs the script itself (instant once cached),
// so a missing or broken build fails the test that needs it — never a skip.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from './cli.js';

export type KubeRelease = '1.35' | '1.36';
export type KubeCommand = 'kubeadm' | 'kube-apiserver' | 'kube-controller-manager';
export type EtcdCommand = 'etcd' | 'etcdctl';

interface Entry {
  readonly version: string;
  readonly bin: string;
}

export interface KubeBinaries {
  /** The release a recipe built (`v1.36.3`). */
  version(release: KubeRelease): string;
  /** `kubeadm` of each release; the control plane (apiserver, controller-manager) is 1.36's. */
  path(release: KubeRelease, command: KubeCommand): string;
  etcd(command: EtcdCommand): string;
  readonly etcdVersion: string;
  /** containerd's daemon binary (the matrix's default line), for its config parser. */
  containerd(): string;
  /** gobuild/check-status: the statements of a check script whose failure the check would ignore. */
  checkStatus(): string;
}

const LIST = repoPath('dist', 'kube-binaries.json');
let cached: KubeBinaries | undefined;

function load(): Record<string, Entry> {
  if (!existsSync(LIST)) {
    // stdout to stderr: the script's progress is the test's log, never its result.
    execFileSync('bash', [repoPath('scripts', 'kube-binaries.sh'), LIST], { stdio: ['ignore', 2, 2] });
  }
  return JSON.parse(readFileSync(LIST, 'utf8')) as Record<string, Entry>;
}

function file(entry: Entry | undefined, name: string, what: string): string {
  if (entry === undefined) throw new Error(`${LIST} lists no ${what}: run scripts/kube-binaries.sh`);
  const path = join(entry.bin, name);
  if (!existsSync(path))
    throw new Error(`${path} is missing (${what} ${entry.version}): run scripts/kube-binaries.sh to build it`);
  return path;
}

export function kubeBinaries(): KubeBinaries {
  if (cached !== undefined) return cached;
  const list = load();
  const k8s = (r: KubeRelease): Entry | undefined => list[`kubernetes-${r}`];
  cached = {
    version: (r) => {
      const e = k8s(r);
      if (e === undefined) throw new Error(`${LIST} lists no kubernetes-${r}: run scripts/kube-binaries.sh`);
      return e.version;
    },
    path: (r, c) => file(k8s(r), c, `kubernetes-${r}`),
    etcd: (c) => file(list['etcd'], c, 'etcd'),
    etcdVersion: list['etcd']?.version ?? '',
    containerd: () => file(list['containerd'], 'containerd', 'containerd'),
    checkStatus: () => file(list['check-status'], 'check-status', 'check-status'),
  };
  return cached;
}

/** One of the binaries above: a Kubernetes command of a release, or etcd's. */
export type BuiltTool = { readonly name: KubeCommand; readonly release: KubeRelease } | { readonly name: EtcdCommand };

export function builtPath(tool: BuiltTool): string {
  return 'release' in tool ? kubeBinaries().path(tool.release, tool.name) : kubeBinaries().etcd(tool.name);
}

/**
 * Starts one of the binaries above under `setpriv --pdeathsig=KILL` (util-linux,
 * Essential): the kernel kills it when the test process ends, however it ends
 * (a test runner's SIGKILL included), so no etcd or API server outlives its test.
 */
export function spawnBuilt(tool: BuiltTool, args: readonly string[], options: SpawnOptions): ChildProcess {
  return spawn('setpriv', ['--pdeathsig=KILL', '--', builtPath(tool), ...args], options);
}

export interface BuiltResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a built binary to its end; output as text. */
export function runBuilt(
  tool: BuiltTool,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<BuiltResult> {
  return new Promise((resolve, reject) => {
    const child = spawnBuilt(tool, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
