// How an underlay probe's output becomes a verdict, with the likely cause of
// a failure. Pure: the runner hands over what the command printed.
import type { CheckResult, CheckStatus } from '../types.js';
import type { Expect, Probe } from './plan.js';
import { MARK, TCP_TRIES } from './scripts.js';
import { UDP_REPEATS } from './udp-scripts.js';
import { duration, judgeCredentials, readCredentialLines } from './credentials.js';

/** The exit code the runner reports when the transport threw (the node could not be reached); stderr says why. */
export const UNREACHED = -1;

/** What the runner observed for one probe. */
export interface ProbeOutput {
  readonly code: number;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** Clock probes: the deployer's clock (ms) just before sending and after the reply. */
  readonly sentAtMs?: number;
  readonly receivedAtMs?: number;
}

interface Verdict {
  readonly status: CheckStatus;
  readonly detail: string;
  readonly cause?: string;
}

/** The words of the last `KUBEMIX-PROBE` line of `stdout`. */
export function marker(stdout: string, word?: string): string[] | undefined {
  const lines = stdout.split(/\r?\n/).filter((l) => l.startsWith(`${MARK} `));
  const hits = word === undefined ? lines : lines.filter((l) => l.split(' ')[1] === word);
  return hits
    .at(-1)
    ?.slice(MARK.length + 1)
    .trim()
    .split(/\s+/);
}

const pass = (detail: string): Verdict => ({ status: 'pass', detail });
const fail = (detail: string, cause?: string): Verdict => ({
  status: 'fail',
  detail,
  ...(cause === undefined ? {} : { cause }),
});
const warn = (detail: string, cause: string): Verdict => ({ status: 'warn', detail, cause });

function received(stdout: string): string {
  return /(\d+) (?:packets )?received/.exec(stdout)?.[0] ?? 'no reply';
}

function judgePing(words: string[], out: ProbeOutput): Verdict {
  if (words[0] === 'ok') return pass(received(out.stdout));
  return fail(
    `no ICMP echo reply (${received(out.stdout)})`,
    'the target is down, not on a network this node routes to, or a firewall drops ICMP echo',
  );
}

function judgeMtu(words: string[], out: ProbeOutput, mtu: number): Verdict {
  if (words[0] === 'ok') return pass(`${mtu}-byte packets pass unfragmented`);
  const local = /mtu=(\d+)/.exec(out.stdout)?.[1];
  if (local !== undefined)
    return fail(
      `the source's own link MTU is ${local}`,
      `raise the node NIC's MTU to ${mtu} or plan network.mtu ${local}`,
    );
  return fail(
    `don't-fragment packets of ${mtu} bytes get no reply (smaller ones do)`,
    `a link on the path has an MTU below ${mtu} (or drops ICMP fragmentation-needed): the overlay's packets would not fit; lower the planned MTU`,
  );
}

function judgeTcp(words: string[], out: ProbeOutput, port: number): Verdict {
  if (words[0] === 'ok') return pass(`port ${port} accepts connections`);
  if (words[0] === 'timeout')
    return fail(
      `no answer on port ${port} in ${TCP_TRIES} tries of 5 s`,
      `a firewall drops TCP ${port} on the path or on the target`,
    );
  const refused = /refused/i.test(out.stdout);
  return fail(
    refused ? `connection to port ${port} refused` : `cannot connect to port ${port}`,
    refused ? `nothing listens on ${port} on the target (is the service running?)` : undefined,
  );
}

function judgeDns(words: string[], want: readonly string[]): Verdict {
  const got = words.slice(1).sort();
  if (got.length === 0)
    return fail(
      'the name does not resolve',
      'the node does not use the cluster DNS (services node) or the record is missing',
    );
  if (got.join(' ') === want.join(' ')) return pass(`resolves to ${got.join(', ')}`);
  return fail(
    `resolves to ${got.join(', ')}, planned ${want.join(', ')}`,
    'a stale record or another resolver answers first',
  );
}

function judgeClock(words: string[], out: ProbeOutput, boundMs: number): Verdict {
  const remote = Number(words[1]);
  if (!Number.isFinite(remote) || out.sentAtMs === undefined || out.receivedAtMs === undefined)
    return fail('the node did not report its clock');
  const uncertainty = (out.receivedAtMs - out.sentAtMs) / 2;
  const skew = remote - (out.sentAtMs + out.receivedAtMs) / 2;
  const text = `${skew >= 0 ? '+' : ''}${(skew / 1000).toFixed(1)} s ±${(uncertainty / 1000).toFixed(1)} s`;
  if (Math.abs(skew) - uncertainty <= boundMs) return pass(`clock ${text} from the deployer`);
  return fail(
    `clock ${text} from the deployer, bound ${boundMs / 1000} s`,
    'time is not synchronised (NTP/chrony/w32time): certificates and bootstrap tokens fail when clocks are apart',
  );
}

function judgeL2(words: string[]): Verdict {
  const line = words.slice(1).join(' ');
  const via = /\bvia (\S+)/.exec(line)?.[1];
  if (via === undefined && /\bdev \S+/.test(line)) return pass('directly connected');
  if (via !== undefined)
    return fail(
      `routed via ${via}`,
      'host-gw needs every node on one L2 segment: use vxlan, or put the nodes on one subnet',
    );
  return fail(`no route: ${line}`, 'the node has no route to its peer');
}

function judgeVxlan(words: string[], out: ProbeOutput, device: string, port: number): Verdict {
  if (words[0] === 'ok') return pass(`the VTEP ${words[1] ?? ''} answers across ${device} (${received(out.stdout)})`);
  if (words[0] === 'no-neighbour')
    return fail(
      `${device} has no VXLAN neighbour for this node`,
      'the CNI on the source has not learned the target (flanneld not running on either node, or the target registered no VTEP): see system-pods and diagnose',
    );
  return fail(
    `echoes to the VTEP ${words[1] ?? ''} across ${device} get no reply (${received(out.stdout)})`,
    `VXLAN packets between these nodes do not arrive: a firewall drops UDP ${port} (the VXLAN port) on the path or on either node, or their VNI or port differ`,
  );
}

/** The node's credentials: fails when one has expired, warns inside a credential's last tenth (credentials.ts). */
function judgeCredentialLines(out: ProbeOutput): Verdict {
  const lines = readCredentialLines(out.stdout);
  const j = judgeCredentials(lines);
  const advice = j.advice.join('; ');
  if (j.expired.length > 0)
    return fail(
      `expired: ${j.expired.map((c) => `${c.name} (${c.kind}, ${duration(c.remainingSeconds)} ago)`).join(', ')}${j.warnings.length > 0 ? `; ${j.warnings.join('; ')}` : ''}`,
      advice,
    );
  if (j.warnings.length > 0) return warn(j.warnings.join('; '), advice);
  if (j.first === undefined) return pass('no credential found');
  return pass(
    `${lines.credentials.length} credentials; the first to expire: ${j.first.name} in ${duration(j.first.remainingSeconds)}`,
  );
}

function judgeWords(expect: Expect, words: string[], out: ProbeOutput): Verdict {
  switch (expect.kind) {
    case 'ping':
      return judgePing(words, out);
    case 'mtu':
      return judgeMtu(words, out, expect.mtu);
    case 'tcp':
      return judgeTcp(words, out, expect.port);
    case 'dns':
      return judgeDns(words, expect.addresses);
    case 'clock':
      return judgeClock(words, out, expect.boundMs);
    case 'l2':
      return judgeL2(words);
    case 'vxlan':
      return judgeVxlan(words, out, expect.device, expect.port);
    case 'udp':
      return fail('judged with its listener (judgeUdp)');
    case 'credentials':
      return judgeCredentialLines(out);
  }
}

/** Why a command printed no verdict: it timed out, its node could not be reached, or it exited early. */
function notRun(what: string, out: ProbeOutput): string {
  if (out.timedOut) return 'timed out';
  if (out.code === UNREACHED) return out.stderr;
  const said = out.stderr.trim().split(/\r?\n/)[0] ?? '';
  return `${what} did not run (exit ${out.code}${said === '' ? '' : `: ${said}`})`;
}

export function judgeProbe(probe: Probe, out: ProbeOutput): CheckResult {
  const words = marker(out.stdout);
  const v: Verdict =
    words === undefined
      ? fail(notRun('the probe', out))
      : words[0] === 'missing'
        ? fail(`${words[1] ?? 'a tool'} is not installed on ${probe.source.name}`, `install ${words[1] ?? 'it'} there`)
        : judgeWords(probe.expect, words, out);
  return result(probe, v, out);
}

/** A UDP cell: the listener on the target saw the source's token, or why not. */
export function judgeUdp(sender: Probe, listener: ProbeOutput, sent: ProbeOutput): CheckResult {
  if (sender.expect.kind !== 'udp') throw new Error(`${sender.id} is not a UDP probe`);
  const { token, port } = sender.expect;
  const got = listener.stdout.split(/\r?\n/).find((l) => l.startsWith(`${MARK} got ${token} `));
  const bind = marker(listener.stdout, 'bind-failed');
  const sentWords = marker(sent.stdout);
  let v: Verdict;
  if (got !== undefined) v = pass(`datagram received from ${got.split(' ')[3] ?? '?'}`);
  else if (marker(listener.stdout, 'missing') !== undefined)
    v = fail(`python3 is not installed on ${sender.target}`, 'install python3 there');
  else if (bind !== undefined)
    v = fail(
      `the listener on ${sender.target} could not bind UDP ${port}: ${bind.slice(1).join(' ')}`,
      `another process (a VXLAN device?) holds UDP ${port}`,
    );
  else if (marker(listener.stdout, 'listening') === undefined)
    v = fail(
      `the listener on ${sender.target} never started: ${notRun('it', listener)}; nothing was sent`,
      listener.code === UNREACHED
        ? `${sender.target} could not be reached over SSH: see its underlay ssh check`
        : `python3 (Linux) or PowerShell (Windows) could not run the listener as root on ${sender.target}: see its output`,
    );
  else if (sentWords?.[0] === 'missing')
    v = fail(`python3 is not installed on ${sender.source.name}`, 'install python3 there');
  else if (sentWords?.[0] === 'send-failed')
    v = fail(
      `the sender failed: ${sentWords.slice(1).join(' ')}`,
      `UDP ${port} is rejected on the path (ICMP port unreachable)`,
    );
  else if (sentWords?.[0] !== 'sent') v = fail(notRun('the sender', sent));
  else
    v = fail(
      `no datagram arrived at ${sender.target} in ${UDP_REPEATS} tries`,
      `a firewall drops UDP ${port} (the VXLAN port) between these nodes, or the port differs from the planned one`,
    );
  return result(sender, v, sent, listener);
}

function result(probe: Probe, v: Verdict, out: ProbeOutput, listener?: ProbeOutput): CheckResult {
  const base = {
    id: probe.id,
    layer: 'underlay' as const,
    probe: probe.probe,
    source: probe.source.name,
    target: probe.target,
    status: v.status,
    detail: v.detail,
  };
  if (v.status === 'pass' || v.status === 'skip') return base;
  const output = [out.stdout, out.stderr, listener === undefined ? '' : `listener: ${listener.stdout}`]
    .map((t) => t.trim())
    .filter(Boolean)
    .join('\n');
  return { ...base, command: probe.command, output, ...(v.cause === undefined ? {} : { cause: v.cause }) };
}
