// Runs an underlay plan through the executor's transports (the same SSH
// sessions, host keys and bastions as `kubemix up`). The only I/O of layer 1.
import type { Transport } from '../../transport/types.js';
import type { CheckResult } from '../types.js';
import { judgeProbe, judgeUdp, marker, type ProbeOutput } from './judge.js';
import type { Probe, UdpGroup, UnderlayPlan } from './plan.js';

export interface RunUnderlayOptions {
  /** A transport per node name. */
  readonly transports: ReadonlyMap<string, Transport>;
  readonly signal: AbortSignal;
  /** Probes in flight at once (across all nodes). */
  readonly concurrency?: number;
  /** Called as each check completes (progress). */
  readonly onResult?: (r: CheckResult) => void;
}

const PROBE_TIMEOUT_MS = 30_000;

async function exec(
  t: Transport,
  shell: Probe['shell'],
  script: string,
  signal: AbortSignal,
  onStdout?: (c: Buffer) => void,
): Promise<ProbeOutput> {
  try {
    const r = await t.exec({
      shell,
      privilege: 'root',
      script,
      timeoutMs: PROBE_TIMEOUT_MS,
      signal,
      ...(onStdout ? { onStdout } : {}),
    });
    return { code: r.code, timedOut: r.timedOut, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    return { code: -1, timedOut: false, stdout: '', stderr: `cannot reach ${t.host}: ${(error as Error).message}` };
  }
}

async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function transportOf(transports: ReadonlyMap<string, Transport>, node: string): Transport {
  const t = transports.get(node);
  if (t === undefined) throw new Error(`no transport for node ${node}`);
  return t;
}

async function runProbe(p: Probe, opts: RunUnderlayOptions): Promise<CheckResult> {
  const t = transportOf(opts.transports, p.source.name);
  const sentAtMs = Date.now();
  const out = await exec(t, p.shell, p.script, opts.signal);
  return judgeProbe(p, { ...out, sentAtMs, receivedAtMs: Date.now() });
}

/** Starts the listener, waits until it says it listens, fires every sender, then collects. */
async function runUdp(g: UdpGroup, opts: RunUnderlayOptions): Promise<CheckResult[]> {
  let ready: () => void = () => undefined;
  const listening = new Promise<void>((resolve) => (ready = resolve));
  let seen = '';
  const listener = exec(
    transportOf(opts.transports, g.target.name),
    g.listener.shell,
    g.listener.script,
    opts.signal,
    (c) => {
      seen += c.toString('utf8');
      if (marker(seen, 'listening') !== undefined) ready();
    },
  ).finally(() => ready());
  await listening;
  const heard = marker(seen, 'listening') !== undefined;
  const sent = await Promise.all(
    g.senders.map((p) =>
      heard
        ? exec(transportOf(opts.transports, p.source.name), p.shell, p.script, opts.signal)
        : Promise.resolve<ProbeOutput>({ code: 0, timedOut: false, stdout: 'not sent: no listener', stderr: '' }),
    ),
  );
  const heardAll = await listener;
  return g.senders.map((p, i) => judgeUdp(p, heardAll, sent[i] as ProbeOutput));
}

/** Runs every probe; a probe whose prerequisite failed is skipped with the reason. */
export async function runUnderlay(plan: UnderlayPlan, opts: RunUnderlayOptions): Promise<CheckResult[]> {
  const results = new Map<string, CheckResult>();
  const record = (r: CheckResult): void => {
    results.set(r.id, r);
    opts.onResult?.(r);
  };
  plan.skipped.forEach(record);
  const first = plan.probes.filter((p) => p.needs === undefined);
  const second = plan.probes.filter((p) => p.needs !== undefined);
  const limit = Math.max(1, opts.concurrency ?? 8);
  await pool(first, limit, async (p) => record(await runProbe(p, opts)));
  await pool(second, limit, async (p) => {
    const needed = results.get(p.needs ?? '');
    if (needed !== undefined && needed.status !== 'pass') {
      const reason = `${needed.probe} ${p.source.name} → ${p.target} failed`;
      record({
        id: p.id,
        layer: 'underlay',
        probe: p.probe,
        source: p.source.name,
        target: p.target,
        status: 'skip',
        detail: reason,
      });
    } else record(await runProbe(p, opts));
  });
  // One listener per target at a time: the port can be bound once per host.
  for (const g of plan.udp) {
    if (opts.signal.aborted) break;
    (await runUdp(g, opts)).forEach(record);
  }
  const order = [
    ...plan.skipped.map((s) => s.id),
    ...plan.probes.map((p) => p.id),
    ...plan.udp.flatMap((g) => g.senders.map((p) => p.id)),
  ];
  return order.map((id) => results.get(id)).filter((r): r is CheckResult => r !== undefined);
}
