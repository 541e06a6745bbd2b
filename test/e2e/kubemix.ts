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
}

const ENV = { KUBEMIX_RETRY_ATTEMPTS: '2', KUBEMIX_RETRY_BASE_MS: '500', KUBEMIX_SSH_CONNECT_TIMEOUT_MS: '5000' };

export function kubemix(argv: readonly string[], options: RunOptions = {}): Promise<KubemixRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [repoPath('bin', 'kubemix.js'), ...argv], {
      env: { ...process.env, ...ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let done = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10 * 60_000);
    child.stdout.on('data', (c: Buffer) => {
      const before = stdout.length;
      stdout += c.toString();
      if (options.killAfterDone === undefined) return;
      // Count completed lines only: a partial line is counted when its newline arrives.
      const fresh = stdout.slice(stdout.lastIndexOf('\n', before) + 1, stdout.lastIndexOf('\n') + 1);
      done += (fresh.match(/"type":"task"[^\n]*"state":"(done|skipped)"/g) ?? []).length;
      if (done >= options.killAfterDone && child.exitCode === null) child.kill('SIGKILL');
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('close', (code) => {
      clearTimeout(timer);
      // NDJSON events are one line each; a failed run ends with its error document, pretty-printed.
      const events = stdout
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, stdout, stderr, events, seconds: (Date.now() - started) / 1000 });
    });
  });
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
