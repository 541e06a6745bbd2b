// The real-cluster tier's clock: each stage's wall time, and for each kubemix
// run how its time splits between the commands on the hosts and kubemix
// itself. From the run's NDJSON events: a task's `elapsedMs` is its time as
// kubemix saw it (connect, uploads, check, apply, captures); `hostMs`, when
// the host's driver reports it, the time its scripts ran there. What kubemix
// adds per task is the difference; what it adds to the run is the wall time
// during which no task was running anywhere (start-up, planning, download
// cache, scheduling), plus that per-task difference on the tasks that ran,
// split by the events' phasesMs into where it went (src/exec/task-clock.ts).
// The bundle's bytes moved to the services node (the `transfer` phase) are
// counted apart: they grow with the bundle and the link, not with kubemix.
import { writeFileSync } from 'node:fs';

export interface RunTimes {
  readonly wallS: number;
  /** Tasks that ran (applied or checked), and those skipped from the journal. */
  readonly ran: number;
  readonly skipped: number;
  /** Seconds in which at least one task ran on some host. */
  readonly busyS: number;
  /** Wall time with no task running: kubemix alone. */
  readonly idleS: number;
  /** Σ over tasks of the hosts' own time, when reported. */
  readonly hostS?: number;
  /** Σ over tasks of the bundle's bytes moved (downloads and images to the services node), when reported. */
  readonly transferS?: number;
  /** Σ over tasks of (kubemix's time − the host's − the transfer): kubemix's own per-task cost, mean in ms. */
  readonly overheadPerTaskMs?: number;
  /**
   * That cost split by where it went (mean ms per task, from the events' phasesMs): a new connection,
   * preparing files, comparing them with the host's, sending them, each round trip's time above the
   * scripts' own (`round trips`), waiting for a reboot, keeping captures and facts, and the rest
   * (retries, the journal).
   */
  readonly overheadParts?: Readonly<Record<string, number>>;
  /** The slowest tasks, with their seconds. */
  readonly slowest: readonly string[];
}

type Ev = Record<string, unknown>;

export function runTimes(events: readonly Ev[], wallS: number): RunTimes {
  const starts = new Map<string, number>();
  const spans: [number, number][] = [];
  const durations: [string, number, number | undefined, Phases | undefined][] = [];
  const ended = new Set<string>();
  let skipped = 0;
  for (const e of events) {
    if (e['type'] !== 'task') continue;
    const id = String(e['id']);
    const t = Number(e['t']);
    if (e['state'] === 'running') starts.set(id, t);
    else if (e['state'] === 'skipped') skipped += 1;
    else if ((e['state'] === 'done' || e['state'] === 'failed') && starts.has(id)) {
      ended.add(id);
      spans.push([starts.get(id) ?? t, t]);
      const host = typeof e['hostMs'] === 'number' ? e['hostMs'] : undefined;
      const phases = typeof e['phasesMs'] === 'object' ? (e['phasesMs'] as Phases) : undefined;
      durations.push([id, Number(e['elapsedMs'] ?? t - (starts.get(id) ?? t)), host, phases]);
    }
  }
  // A task still running when the run ended (a kill -9 during kubeadm init) kept a host busy until
  // then: the run's clock (`t`) starts with the process, so it ran until `wallS`.
  for (const [id, start] of starts) if (!ended.has(id)) spans.push([start, Math.max(start, wallS * 1000)]);
  spans.sort((a, b) => a[0] - b[0]);
  let busy = 0;
  let end = -Infinity;
  for (const [s, e] of spans) {
    if (e <= end) continue;
    busy += e - Math.max(s, end);
    end = e;
  }
  const withHost = durations.filter((d): d is [string, number, number, Phases | undefined] => d[2] !== undefined);
  const hostMs = withHost.reduce((a, d) => a + d[2], 0);
  const transferMs = durations.reduce((a, d) => a + transferOf(d[3]), 0);
  const over = withHost.reduce((a, d) => a + (d[1] - d[2] - transferOf(d[3])), 0);
  const parts = overheadParts(withHost);
  return {
    wallS,
    ran: durations.length,
    skipped,
    busyS: busy / 1000,
    idleS: Math.max(0, wallS - busy / 1000),
    ...(withHost.length === 0 ? {} : { hostS: hostMs / 1000, overheadPerTaskMs: over / withHost.length }),
    ...(transferMs === 0 ? {} : { transferS: transferMs / 1000 }),
    ...(parts === undefined ? {} : { overheadParts: parts }),
    slowest: [...durations]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([id, ms]) => `${id} ${(ms / 1000).toFixed(0)} s`),
  };
}

type Phases = Readonly<Record<string, number>>;

const transferOf = (p: Phases | undefined): number => p?.['transfer'] ?? 0;

/** Mean ms per task of each part of kubemix's own time (RunTimes.overheadParts); undefined without phases. */
function overheadParts(
  tasks: readonly [string, number, number, Phases | undefined][],
): Record<string, number> | undefined {
  const timed = tasks.filter((d): d is [string, number, number, Phases] => d[3] !== undefined);
  if (timed.length === 0) return undefined;
  const sum: Record<string, number> = {};
  const add = (k: string, ms: number) => (sum[k] = (sum[k] ?? 0) + ms);
  for (const [, elapsed, host, p] of timed) {
    let seen = 0;
    for (const [k, ms] of Object.entries(p)) {
      seen += ms;
      if (k === 'transfer') continue;
      add(k === 'commands' ? 'round trips' : k, k === 'commands' ? ms - host : ms);
    }
    add('rest', elapsed - seen);
  }
  return Object.fromEntries(Object.entries(sum).map(([k, ms]) => [k, ms / timed.length]));
}

/** `connect 3100, prepare 40, …` in ms, the parts that took at least a millisecond on average. */
export function partsText(parts: Readonly<Record<string, number>> | undefined): string {
  if (parts === undefined) return '';
  return Object.entries(parts)
    .filter(([, ms]) => Math.abs(ms) >= 1)
    .map(([k, ms]) => `${k} ${ms.toFixed(0)}`)
    .join(', ');
}

export class Stages {
  private readonly rows: { name: string; seconds: number; note: string }[] = [];
  private readonly runs: { name: string; times: RunTimes }[] = [];
  private readonly started = Date.now();

  constructor(private readonly log: (line: string) => void) {}

  async time<T>(name: string, work: () => Promise<T> | T): Promise<T> {
    const t = Date.now();
    try {
      return await work();
    } finally {
      const seconds = (Date.now() - t) / 1000;
      this.rows.push({ name, seconds, note: '' });
      this.log(`stage ${name}: ${seconds.toFixed(0)} s`);
    }
  }

  /** Records a kubemix run's split (see runTimes) under a stage's name. */
  run(name: string, events: readonly Ev[], wallS: number): RunTimes {
    const times = runTimes(events, wallS);
    this.runs.push({ name, times });
    const host =
      times.hostS === undefined
        ? ''
        : `, commands on the hosts ${times.hostS.toFixed(0)} s` +
          (times.transferS === undefined ? '' : `, bundle moved to the services node ${times.transferS.toFixed(0)} s`) +
          `, kubemix per task ${times.overheadPerTaskMs?.toFixed(0)} ms` +
          (times.overheadParts === undefined ? '' : ` (${partsText(times.overheadParts)})`);
    this.log(
      `run ${name}: ${wallS.toFixed(0)} s wall, ${times.ran} tasks ran, ${times.skipped} skipped, no task running ${times.idleS.toFixed(0)} s${host}; slowest: ${times.slowest.join(', ')}`,
    );
    return times;
  }

  note(text: string): void {
    this.rows.push({ name: text, seconds: Number.NaN, note: 'note' });
  }

  summary(): string {
    const wall = (Date.now() - this.started) / 1000;
    const lines = [
      'real-cluster tier: stage times',
      ...this.rows.map((r) =>
        r.note === 'note' ? `  ${r.name}` : `  ${r.name.padEnd(52)} ${r.seconds.toFixed(0).padStart(6)} s`,
      ),
      `  ${'wall time of the test file'.padEnd(52)} ${wall.toFixed(0).padStart(6)} s`,
      'kubemix runs: wall, tasks ran/skipped, time with no task running, host time, the bundle moved to the services node, and kubemix per task (when reported) and where that went, in ms per task',
      ...this.runs.map(
        ({ name, times: t }) =>
          `  ${name.padEnd(40)} ${t.wallS.toFixed(0).padStart(5)} s  ${String(t.ran).padStart(4)}/${String(t.skipped).padEnd(4)} idle ${t.idleS.toFixed(0).padStart(4)} s${t.hostS === undefined ? '' : `  host ${t.hostS.toFixed(0)} s`}${t.transferS === undefined ? '' : `  bundle ${t.transferS.toFixed(0)} s`}${t.hostS === undefined ? '' : `  +${t.overheadPerTaskMs?.toFixed(0)} ms/task`}${t.overheadParts === undefined ? '' : ` (${partsText(t.overheadParts)})`}`,
      ),
    ];
    return lines.join('\n');
  }

  write(file: string | undefined): void {
    const text = this.summary();
    this.log(text);
    if (file !== undefined) writeFileSync(file, `${text}\n`);
  }
}
