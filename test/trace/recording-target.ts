// A recording target for the real executor: one transport per host, the same
// interface the SSH transport implements, that runs nothing. It records every
// call in the order the executor makes them and answers like a fresh host:
// checks "not done" (exit 1) — except the check after a rebooting task's
// apply (Task.reboots), which finds the host back — upload probes "missing", applies "ok", and
// captured files a fake value. The executor fills secrets in before a script
// reaches the transport, so the recorder turns the fake values back into
// `{{secret:NAME}}` and keeps only that; whether the text then equals the
// plan's is recorded per step, for the tests to assert.
import { sha256 } from '../../src/exec/hash.js';
import { uploadPath } from '../../src/plan/artifact-path.js';
import type { Plan, Task } from '../../src/plan/types.js';
import type { ExecRequest, ExecResult, HostTransport, UploadRequest } from '../../src/transport/types.js';
import { fakeSecret, unfill } from './fake-secrets.js';
import { SerialGate, type GatePriority } from './serial-gate.js';

export type StepKind = 'check' | 'probe' | 'upload' | 'apply' | 'capture' | 'cache-probe' | 'cache-upload' | 'unknown';

export interface TraceStep {
  readonly host: string;
  readonly task: string;
  readonly kind: StepKind;
  readonly shell: string;
  readonly privilege: string;
  /** Script (check, apply, probe) with secrets as references only. */
  readonly script?: string;
  /** Upload destination or captured file. */
  readonly path?: string;
  readonly mode?: string;
  /** Lines of the script or uploaded file that carry a `{{secret:NAME}}` reference, trimmed. */
  readonly references: readonly string[];
  /** Secrets whose values the executor filled into what this host received. */
  readonly filled: readonly string[];
  /** With references restored, what the host received is the plan's text (script, or artifact by sha256). */
  readonly matchesPlan: boolean;
  /** A `{{secret:…}}` reached the host unfilled. */
  readonly unfilledReference: boolean;
  /** The capture's secret name. */
  readonly secret?: string;
  /** A download-cache upload: the download's id. */
  readonly download?: string;
}

const OK: Omit<ExecResult, 'code' | 'stdout'> = { timedOut: false, stderr: '', durationMs: 0 };

export class RecordingTarget {
  readonly steps: TraceStep[] = [];
  readonly gate: SerialGate;
  private readonly tasks: ReadonlyMap<string, Task>;
  /** Rebooting tasks whose apply ran: their host has come back. */
  private readonly rebooted = new Set<string>();
  /** Task ids whose apply fails (exit 1), for tests of a roll that must stop. */
  readonly failing = new Set<string>();
  /** What a task's apply prints on stdout (a query's answer), by task id. */
  readonly outputs = new Map<string, string>();
  /** What a failing task's apply prints on stderr, by task id (default: `trace: <id> fails`). */
  readonly failureText = new Map<string, string>();

  constructor(
    private readonly plan: Plan,
    private readonly secretNames: readonly string[],
    priority: GatePriority = 'plan-order',
  ) {
    this.tasks = new Map(plan.tasks.map((t) => [t.id, t]));
    this.gate = new SerialGate(new Map(plan.tasks.map((t, i) => [t.id, i])), priority);
  }

  transportFor = (host: string): HostTransport => ({
    host,
    connected: true,
    connect: async () => undefined,
    close: async () => undefined,
    exec: async (r) => this.exec(host, await this.gate.enter(host), r),
    upload: async (r) => this.upload(host, await this.gate.enter(host), r),
    readFile: async (path, privilege) => this.capture(host, await this.gate.enter(host), path, privilege),
  });

  private task(id: string): Task {
    const t = this.tasks.get(id);
    if (t === undefined) throw new Error(`trace: unknown task ${id}`);
    return t;
  }

  /** Turns verified download hashes back into their `{{sha256:ID}}` references. */
  private unhash(text: string): string {
    let out = text;
    for (const d of this.plan.downloads ?? [])
      if (d.sha256 !== undefined) out = out.split(d.sha256).join(`{{sha256:${d.id}}}`);
    return out;
  }

  private exec(host: string, id: string, r: ExecRequest): ExecResult {
    const task = this.task(id);
    const { text: unfilled, found } = unfill(r.script, this.secretNames);
    const text = this.unhash(unfilled);
    const kind = classify(task, text);
    this.steps.push({
      host,
      task: id,
      kind,
      shell: r.shell,
      privilege: r.privilege,
      script: text,
      references: references(text),
      filled: found,
      matchesPlan: kind !== 'unknown',
      unfilledReference: r.script.includes('{{secret:'),
    });
    // A fresh host: nothing is in place, so every uploaded file is reported missing.
    if (kind === 'probe') return { ...OK, code: 0, stdout: task.uploads.map(() => 'missing\n').join('') };
    if (kind === 'cache-probe')
      return { ...OK, code: 0, stdout: (task.serves?.downloads ?? []).map(() => 'missing\n').join('') };
    if (kind === 'apply' && this.failing.has(id))
      return { ...OK, code: 1, stdout: '', stderr: this.failureText.get(id) ?? `trace: ${id} fails` };
    if (kind === 'apply' && task.reboots === true) this.rebooted.add(id);
    const stdout = kind === 'apply' ? (this.outputs.get(id) ?? '') : '';
    if (stdout !== '') r.onStdout?.(Buffer.from(stdout));
    if (stdout !== '') return { ...OK, code: 0, stdout };
    return { ...OK, code: kind === 'check' && !this.rebooted.has(id) ? 1 : 0, stdout: '' };
  }

  private upload(host: string, id: string, r: UploadRequest): void {
    const served = this.served(id, r);
    if (served !== undefined) {
      this.steps.push({
        host,
        task: id,
        kind: 'cache-upload',
        shell: r.shell,
        privilege: r.privilege,
        path: r.remotePath,
        mode: r.mode,
        references: [],
        filled: [],
        matchesPlan: served.ok,
        unfilledReference: false,
        download: served.id,
      });
      return;
    }
    const { text: unfilled, found } = unfill(r.content.toString('utf8'), this.secretNames);
    const text = this.unhash(unfilled);
    // One of the task's own artifacts, written where the executor places it, with the plan's content.
    const mine = new Set(this.task(id).uploads.map((u) => u.artifact));
    const artifact = this.plan.artifacts.find((a) => mine.has(a.id) && uploadPath(a) === r.remotePath);
    const matchesPlan = artifact !== undefined && sha256(text) === artifact.sha256;
    this.steps.push({
      host,
      task: id,
      kind: 'upload',
      shell: r.shell,
      privilege: r.privilege,
      path: r.remotePath,
      mode: r.mode,
      references: references(text),
      filled: found,
      matchesPlan,
      unfilledReference: r.content.includes('{{secret:'),
    });
  }

  /** An upload into the task's download cache: whether it is a plan download with the content its hash says; undefined for other uploads. */
  private served(id: string, r: UploadRequest): { ok: boolean; id: string } | undefined {
    const serves = this.task(id).serves;
    if (serves === undefined || !r.remotePath.startsWith(`${serves.dir}/`)) return undefined;
    const hash = r.remotePath.slice(serves.dir.length + 1);
    const d = (this.plan.downloads ?? []).find((x) => x.sha256 === hash);
    return {
      ok: d !== undefined && serves.downloads.includes(d.id) && sha256(r.content.toString('utf8')) === hash,
      id: d?.id ?? '?',
    };
  }

  private capture(host: string, id: string, path: string, privilege: string): string {
    const task = this.task(id);
    const c = (task.captures ?? []).find((x) => x.remotePath === path);
    this.steps.push({
      host,
      task: id,
      kind: 'capture',
      shell: task.apply.shell,
      privilege,
      path,
      references: [],
      filled: [],
      matchesPlan: c !== undefined,
      unfilledReference: false,
      ...(c === undefined ? {} : { secret: c.name }),
    });
    if (c === undefined) throw new Error(`trace: ${id} read ${path}, which it does not capture`);
    return `${fakeSecret(c.name)}\n`;
  }
}

function references(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.includes('{{secret:'))
    .map((l) => l.trim());
}

function classify(task: Task, script: string): StepKind {
  if (task.check !== null && script === task.check.script) return 'check';
  if (script === task.apply.script) return 'apply';
  // The executor's own probe: sha256 of each upload's destination (task-steps.ts hashScript).
  if (task.uploads.length > 0 && /^(for f in |foreach \(\$f in )/.test(script)) return 'probe';
  // The executor's download-cache probe (task-steps.ts fillServedCache).
  if (task.serves !== undefined && script.startsWith(`mkdir -p '${task.serves.dir}'\n`)) return 'cache-probe';
  return 'unknown';
}
