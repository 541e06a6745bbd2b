// The real launcher (bin/kubemix.js) in a child process for the VM tier, with
// `--json` NDJSON events parsed, and an optional SIGKILL once a number of
// tasks have finished (the kill -9 / resume test). A child, not runCli: an
// in-process `up --check` once kept the test process alive (docs/e2e.md).
import { spawn } from 'node:child_process';
import { repoPath } from '../helpers/cli.js';

export interface TaskEvent {
  readonly type: 'task';
  readonly id: string;
  readonly host: string;
  readonly state: string;
  readonly changed?: boolean;
  readonly error?: string;
  readonly reason?: string;
}

export interface KubemixRun {
  /** Exit code; null when the child was killed. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly events: readonly Record<string, unknown>[];
  readonly seconds: number;
}

export interface RunOptions {
  readonly timeoutMs?: number;
  /** SIGKILL the child once this many tasks reported done (applied or skipped). */
  readonly killAfterDone?: number;
  /**
   * Run the launcher as a deployer inside this network namespace (a hypervisor's), with
   * `resolvConf` bind-mounted as its /etc/resolv.conf in a mount namespace of its own.
   */
  readonly deployer?: { readonly netns: string; readonly resolvConf: string };
  /** Called with each NDJSON event as it arrives. */
  readonly onEvent?: (event: Record<string, unknown>) => void;
  /** Environment over the tier's (an empty value: kubemix's own default). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A running kubemix: its events so far, a way to SIGKILL it, and its end. */
export interface KubemixProcess {
  readonly events: Record<string, unknown>[];
  readonly kill: () => void;
  readonly done: Promise<KubemixRun>;
}

const ENV = { KUBEMIX_RETRY_ATTEMPTS: '2', KUBEMIX_RETRY_BASE_MS: '500', KUBEMIX_SSH_CONNECT_TIMEOUT_MS: '5000' };

/** The command line: the launcher itself, or (deployer) inside the namespace with its own resolver; every step execs. */
function commandLine(argv: readonly string[], options: RunOptions): [string, string[]] {
  const launcher = [process.execPath, repoPath('bin', 'kubemix.js'), ...argv];
  const d = options.deployer;
  if (d === undefined) return [launcher[0] ?? '', launcher.slice(1)];
  const inner = 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"';
  return [
    'ip',
    [
      'netns',
      'exec',
      d.netns,
      'unshare',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      inner,
      'sh',
      d.resolvConf,
      ...launcher,
    ],
  ];
}

export function startKubemix(argv: readonly string[], options: RunOptions = {}): KubemixProcess {
  const started = Date.now();
  const [cmd, args] = commandLine(argv, options);
  const child = spawn(cmd, args, {
    env: { ...process.env, ...ENV, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: Record<string, unknown>[] = [];
  const kill = (): void => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  let partial = '';
  let done = 0;
  const timer = setTimeout(kill, options.timeoutMs ?? 10 * 60_000);
  // A test process that ends (a failed assertion, the tier stopped by a signal) takes its kubemix with it.
  process.on('exit', kill);
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    partial += c.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      // NDJSON events are one line each; a failed run ends with its error document, pretty-printed.
      if (!line.startsWith('{') || !line.endsWith('}')) continue;
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push(event);
      options.onEvent?.(event);
      if (event['type'] === 'task' && (event['state'] === 'done' || event['state'] === 'skipped')) done += 1;
      if (options.killAfterDone !== undefined && done >= options.killAfterDone) kill();
    }
  });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const ended = new Promise<KubemixRun>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      process.off('exit', kill);
      resolve({ code, stdout, stderr, events, seconds: (Date.now() - started) / 1000 });
    });
  });
  return { events, kill, done: ended };
}

export function kubemix(argv: readonly string[], options: RunOptions = {}): Promise<KubemixRun> {
  return startKubemix(argv, options).done;
}

export function taskEvents(run: KubemixRun): TaskEvent[] {
  return run.events.filter((e): e is Record<string, unknown> & TaskEvent => e['type'] === 'task');
}

/** Ids of tasks that ran their apply and changed something. */
export function applied(run: KubemixRun): string[] {
  return taskEvents(run)
    .filter((e) => e.state === 'done' && e.changed === true)
    .map((e) => e.id)
    .sort();
}

/** Final state per task id (the last event wins). */
export function finalStates(run: KubemixRun): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of taskEvents(run)) out.set(e.id, e.state);
  return out;
}

export function output(run: KubemixRun): string {
  return `exit ${run.code}\n--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-4000)}`;
}
