// Runs an underlay plan through the executor's transports (the same SSH
// sessions, host keys and bastions as `kubemix up`). The only I/O of layer 1.
import type { Transport } from '../../transport/types.js';
import type { CheckResult } from '../types.js';
import { judgeProbe, judgeUdp, marker, UNREACHED, type ProbeOutput } from './judge.js';
import type { Probe, UdpGroup, UnderlayPlan } from './plan.js';
import { blockedResult, skippedResult, unreachableResult, type Reach } from './reach.js';

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
    return {
      code: UNREACHED,
      timedOut: false,
      stdout: '',
      stderr: `cannot reach ${t.host} over SSH: ${(error as Error).message}`,
    };
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

/** A trivial command as root: connects (host key checked, login) and proves the probes can run. */
async function reach(t: Transport, shell: Probe['shell'], signal: AbortSignal): Promise<Reach> {
  try {
    const r = await t.exec({ shell, privilege: 'root', script: 'exit 0\n', timeoutMs: PROBE_TIMEOUT_MS, signal });
    if (r.timedOut) return { ok: false, how: 'connect', reason: `no answer within ${PROBE_TIMEOUT_MS / 1000} s` };
    if (r.code !== 0)
      return { ok: false, how: 'root', reason: `exit ${r.code}: ${r.stderr.trim().split(/\r?\n/)[0] ?? ''}` };
    return { ok: true };
  } catch (error) {
    // The transport's errors start with the node's name, which the report already gives.
    const message = (error as Error).message;
    return {
      ok: false,
      how: 'connect',
      reason: message.startsWith(`${t.host}: `) ? message.slice(t.host.length + 2) : message,
    };
  }
}

/** Each node a probe runs on (sources, and UDP targets for their listeners), with its shell. */
function nodesToReach(plan: UnderlayPlan): Map<string, Probe['shell']> {
  const nodes = new Map<string, Probe['shell']>();
  for (const p of [...plan.probes, ...plan.udp.flatMap((g) => g.senders)]) nodes.set(p.source.name, p.shell);
  for (const g of plan.udp) nodes.set(g.target.name, g.listener.shell);
  return nodes;
}

interface Reachable {
  /** The plan without the probes that need an unreachable node. */
  readonly plan: UnderlayPlan;
  /** One failure per unreachable node, then every probe it stopped (skipped, naming the node). */
  readonly results: readonly CheckResult[];
}

/** Asks every node once; probes from (or, for UDP, to) a node that cannot be reached are not run. */
async function reachable(plan: UnderlayPlan, opts: RunUnderlayOptions, limit: number): Promise<Reachable> {
  const down = new Map<string, Reach & { ok: false }>();
  const nodes = nodesToReach(plan);
  await pool([...nodes], limit, async ([node, shell]) => {
    const r = await reach(transportOf(opts.transports, node), shell, opts.signal);
    if (!r.ok) down.set(node, r);
  });
  const blocked: { node: string; result: CheckResult }[] = [];
  const blocking = (p: Probe, target?: string): string | undefined =>
    target !== undefined && down.has(target) ? target : down.has(p.source.name) ? p.source.name : undefined;
  const keep = (p: Probe, target?: string): boolean => {
    const node = blocking(p, target);
    if (node !== undefined) blocked.push({ node, result: blockedResult(p, node) });
    return node === undefined;
  };
  const probes = plan.probes.filter((p) => keep(p));
  const udp = plan.udp
    .map((g) => ({ ...g, senders: g.senders.filter((p) => keep(p, g.target.name)) }))
    .filter((g) => g.senders.length > 0);
  const count = (node: string): number => blocked.filter((b) => b.node === node).length;
  // In plan order, not in the order the attempts ended: the report stays deterministic.
  const failures = [...nodes.keys()].flatMap((node) => {
    const r = down.get(node);
    return r === undefined ? [] : [unreachableResult(node, r, count(node))];
  });
  return { plan: { ...plan, probes, udp }, results: [...failures, ...blocked.map((b) => b.result)] };
}

/** Runs every probe; a probe whose prerequisite failed is skipped with the reason. */
export async function runUnderlay(full: UnderlayPlan, opts: RunUnderlayOptions): Promise<CheckResult[]> {
  const results = new Map<string, CheckResult>();
  const record = (r: CheckResult): void => {
    results.set(r.id, r);
    opts.onResult?.(r);
  };
  const limit = Math.max(1, opts.concurrency ?? 8);
  const reached = await reachable(full, opts, limit);
  const plan = reached.plan;
  reached.results.forEach(record);
  plan.skipped.forEach(record);
  const first = plan.probes.filter((p) => p.needs === undefined);
  const second = plan.probes.filter((p) => p.needs !== undefined);
  await pool(first, limit, async (p) => record(await runProbe(p, opts)));
  await pool(second, limit, async (p) => {
    const needed = results.get(p.needs ?? '');
    if (needed !== undefined && needed.status !== 'pass')
      record(skippedResult(p, `${needed.probe} ${p.source.name} → ${p.target} failed`));
    else record(await runProbe(p, opts));
  });
  // One listener per target at a time: the port can be bound once per host.
  for (const g of plan.udp) {
    if (opts.signal.aborted) break;
    (await runUdp(g, opts)).forEach(record);
  }
  const order = [
    ...reached.results.filter((r) => r.status === 'fail').map((r) => r.id),
    ...full.skipped.map((s) => s.id),
    ...full.probes.map((p) => p.id),
    ...full.udp.flatMap((g) => g.senders.map((p) => p.id)),
  ];
  return order.map((id) => results.get(id)).filter((r): r is CheckResult => r !== undefined);
}
