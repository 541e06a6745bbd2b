// Which underlay probes to run: every node pair, every node against the API
// endpoint and the names the cluster depends on, each with the command for
// the source's OS. Pure: same input, same probes, in a stable order.
import type { ClusterModel } from '../../model/resolve.js';
import type { NodeRole } from '../../model/types.js';
import { checkId, type CheckResult } from '../types.js';
import * as s from './scripts.js';
import * as u from './udp-scripts.js';
import { linuxCredentials, windowsCredentials } from './credential-scripts.js';

export interface UnderlayNode {
  readonly name: string;
  readonly address: string;
  readonly os: 'linux' | 'windows';
  readonly role: NodeRole;
}

export interface UnderlayInput {
  readonly nodes: readonly UnderlayNode[];
  /** The planned node MTU: don't-fragment probes of this size must pass. */
  readonly nodeMtu: number;
  /** VXLAN's UDP port; undefined for host-gw (no encapsulation). */
  readonly vxlanPort: number | undefined;
  /** flannel's VXLAN device (`flannel.<VNI>`), probed node to node once installed; undefined otherwise. */
  readonly vxlanDevice?: string | undefined;
  /** host-gw routes pod traffic via node IPs: every node pair must be on one L2 segment. */
  readonly hostGw: boolean;
  readonly api: { readonly address: string; readonly port: number; readonly viaLoadBalancer: boolean };
  /** Names every node must resolve, each to exactly these addresses. */
  readonly names: readonly { readonly name: string; readonly addresses: readonly string[] }[];
  /** Kubernetes is installed: the API server and kubelets should answer. */
  readonly installed: boolean;
  readonly maxClockSkewMs: number;
}

/** What judge.ts compares a probe's output against. */
export type Expect =
  | { readonly kind: 'ping' }
  | { readonly kind: 'mtu'; readonly mtu: number }
  | { readonly kind: 'tcp'; readonly port: number }
  | { readonly kind: 'dns'; readonly addresses: readonly string[] }
  | { readonly kind: 'clock'; readonly boundMs: number }
  | { readonly kind: 'l2' }
  | { readonly kind: 'vxlan'; readonly device: string; readonly port: number }
  | { readonly kind: 'udp'; readonly port: number; readonly token: string }
  | { readonly kind: 'credentials' };

export interface Probe {
  readonly id: string;
  readonly probe: string;
  readonly source: UnderlayNode;
  readonly target: string;
  readonly shell: 'sh' | 'powershell';
  readonly script: string;
  readonly command: string;
  readonly expect: Expect;
  /** Run only when this probe passed (an MTU probe needs the host reachable at all). */
  readonly needs?: string;
}

/** One UDP listener on a target and the senders that aim at it. */
export interface UdpGroup {
  readonly target: UnderlayNode;
  readonly port: number;
  readonly seconds: number;
  readonly listener: { readonly shell: 'sh' | 'powershell'; readonly script: string; readonly command: string };
  readonly senders: readonly Probe[];
}

export interface UnderlayPlan {
  readonly probes: readonly Probe[];
  readonly udp: readonly UdpGroup[];
  readonly skipped: readonly CheckResult[];
}

/** Seconds a UDP listener waits for its senders once it is listening. */
export const UDP_WAIT_SECONDS = 8;
/** kubelet's port (kubelet --port default). */
export const KUBELET_PORT = 10250;
/** IPv4 (20) + ICMP (8) header bytes: a don't-fragment echo of node MTU less 28 fills the MTU exactly. */
const ICMP_OVERHEAD = 28;
export const DEFAULT_MAX_CLOCK_SKEW_MS = 2_000;

export const PROBE_NAMES = {
  ping: 'ping',
  udp: (port: number) => `udp-${port}`,
  mtu: (mtu: number) => `mtu-${mtu}`,
  api: (port: number) => `tcp-${port}`,
  kubelet: `tcp-${KUBELET_PORT}`,
  dns: 'dns',
  clock: 'clock',
  l2: 'l2-segment',
  vxlan: 'vxlan',
  credentials: 'credentials',
} as const;

/** The credentials probe's column: how long each credential on the node has left. */
export const CREDENTIALS_TARGET = 'expiry';

/** The planned facts the underlay is checked against, from the model. */
export function underlayInput(model: ClusterModel, installed: boolean): UnderlayInput {
  const services = model.nodes.find((n) => n.role === 'services');
  const api = model.cluster.apiEndpoint;
  const names = [{ name: api.host, addresses: [api.address] }];
  if (model.services?.registry === true && services !== undefined)
    names.push({ name: `registry.${model.cluster.name}.${model.cluster.domain}`, addresses: [services.ip] });
  return {
    nodes: model.nodes.map((n) => ({ name: n.name, address: n.ip, os: n.osFamily, role: n.role })),
    nodeMtu: model.cluster.network.nodeMtu,
    vxlanPort: model.overlay.vxlan?.port,
    vxlanDevice:
      model.overlay.plugin === 'flannel' && model.overlay.vxlan !== undefined
        ? `flannel.${model.overlay.vxlan.vni}`
        : undefined,
    hostGw: model.overlay.backend === 'host-gw',
    api: {
      address: api.address,
      port: api.port,
      viaLoadBalancer: services !== undefined && api.address === services.ip,
    },
    names,
    installed,
    maxClockSkewMs: DEFAULT_MAX_CLOCK_SKEW_MS,
  };
}

function probe(
  name: string,
  source: UnderlayNode,
  target: string,
  cmd: s.ProbeCommand,
  expect: Expect,
  needs?: string,
): Probe {
  const shell = source.os === 'windows' ? 'powershell' : 'sh';
  const id = checkId('underlay', name, source.name, target);
  return { id, probe: name, source, target, shell, ...cmd, expect, ...(needs === undefined ? {} : { needs }) };
}

function skip(name: string, source: string, target: string, reason: string): CheckResult {
  const id = checkId('underlay', name, source, target);
  return { id, layer: 'underlay', probe: name, source, target, status: 'skip', detail: reason };
}

const win = (n: UnderlayNode): boolean => n.os === 'windows';

function pairProbes(input: UnderlayInput, a: UnderlayNode, b: UnderlayNode): Probe[] {
  const size = input.nodeMtu - ICMP_OVERHEAD;
  const ping = probe(PROBE_NAMES.ping, a, b.name, win(a) ? s.windowsPing(b.address) : s.linuxPing(b.address), {
    kind: 'ping',
  });
  const mtuCmd = win(a) ? s.windowsPing(b.address, size) : s.linuxPing(b.address, size);
  const out = [
    ping,
    probe(PROBE_NAMES.mtu(input.nodeMtu), a, b.name, mtuCmd, { kind: 'mtu', mtu: input.nodeMtu }, ping.id),
  ];
  const vxlan = vxlanProbe(input, a, b);
  if (vxlan !== undefined) out.push(vxlan);
  if (input.hostGw)
    out.push(
      probe(PROBE_NAMES.l2, a, b.name, win(a) ? s.windowsRoute(b.address) : s.linuxRoute(b.address), { kind: 'l2' }),
    );
  return out;
}

/**
 * Once installed, the VXLAN path itself, node to node through the CNI's
 * device (the UDP listener cannot run then: the device holds the port).
 * Linux pairs only: on Windows flannel's VTEP is an HNS endpoint, which
 * layer 2's pod cells reach.
 */
function vxlanProbe(input: UnderlayInput, a: UnderlayNode, b: UnderlayNode): Probe | undefined {
  const device = input.vxlanDevice;
  const port = input.vxlanPort;
  if (!input.installed || device === undefined || port === undefined) return undefined;
  if (a.role === 'services' || b.role === 'services' || win(a) || win(b)) return undefined;
  return probe(PROBE_NAMES.vxlan, a, b.name, s.linuxVxlanPing(device, b.address), { kind: 'vxlan', device, port });
}

function udpGroups(input: UnderlayInput, select: (id: string) => boolean): UdpGroup[] {
  const port = input.vxlanPort;
  if (port === undefined) return [];
  const groups = input.nodes.map((target): UdpGroup => {
    const sources = input.nodes.filter(
      (n) => n !== target && select(checkId('underlay', PROBE_NAMES.udp(port), n.name, target.name)),
    );
    const token = (n: UnderlayNode): string => `kubemix-verify:${n.name}`;
    const listener = win(target)
      ? u.windowsUdpListener(port, sources.map(token), UDP_WAIT_SECONDS)
      : u.linuxUdpListener(port, sources.map(token), UDP_WAIT_SECONDS);
    const senders = sources.map((src) =>
      probe(
        PROBE_NAMES.udp(port),
        src,
        target.name,
        win(src)
          ? u.windowsUdpSender(target.address, port, token(src))
          : u.linuxUdpSender(target.address, port, token(src)),
        { kind: 'udp', port, token: token(src) },
      ),
    );
    return {
      target,
      port,
      seconds: UDP_WAIT_SECONDS,
      listener: { shell: win(target) ? 'powershell' : 'sh', ...listener },
      senders,
    };
  });
  return groups.filter((g) => g.senders.length > 0);
}

function tcpProbes(input: UnderlayInput, node: UnderlayNode): { probes: Probe[]; skipped: CheckResult[] } {
  const targets: [string, string, number][] = [];
  const apiName = PROBE_NAMES.api(input.api.port);
  if (input.api.viaLoadBalancer) targets.push([apiName, 'api-lb', input.api.port]);
  for (const cp of input.nodes.filter((n) => n.role === 'control-plane'))
    targets.push([apiName, cp.name, input.api.port]);
  for (const k of input.nodes.filter((n) => n.role !== 'services' && n !== node))
    targets.push([PROBE_NAMES.kubelet, k.name, KUBELET_PORT]);
  if (!input.installed)
    return {
      probes: [],
      skipped: targets.map(([name, target]) => skip(name, node.name, target, 'before install: nothing listens yet')),
    };
  const address = (target: string): string =>
    target === 'api-lb' ? input.api.address : (input.nodes.find((n) => n.name === target)?.address ?? '');
  return {
    probes: targets.map(([name, target, port]) =>
      probe(name, node, target, win(node) ? s.windowsTcp(address(target), port) : s.linuxTcp(address(target), port), {
        kind: 'tcp',
        port,
      }),
    ),
    skipped: [],
  };
}

/** The probes for `input`; `select` (--only/--skip) leaves out the checks it refuses, unrun and unreported. */
export function planUnderlay(input: UnderlayInput, select: (id: string) => boolean = () => true): UnderlayPlan {
  const probes: Probe[] = [];
  const skipped: CheckResult[] = [];
  for (const a of input.nodes) {
    for (const b of input.nodes) if (a !== b) probes.push(...pairProbes(input, a, b));
    const tcp = tcpProbes(input, a);
    probes.push(...tcp.probes);
    skipped.push(...tcp.skipped);
    for (const n of input.names)
      probes.push(
        probe(PROBE_NAMES.dns, a, n.name, win(a) ? s.windowsDns(n.name) : s.linuxDns(n.name), {
          kind: 'dns',
          addresses: [...n.addresses].sort(),
        }),
      );
    probes.push(
      probe(PROBE_NAMES.clock, a, 'deployer', win(a) ? s.windowsClock() : s.linuxClock(), {
        kind: 'clock',
        boundMs: input.maxClockSkewMs,
      }),
    );
    // Once installed: every credential the node's components run with, warned about before it expires.
    if (input.installed && a.role !== 'services')
      probes.push(
        probe(
          PROBE_NAMES.credentials,
          a,
          CREDENTIALS_TARGET,
          win(a) ? windowsCredentials() : linuxCredentials(a.role === 'control-plane'),
          { kind: 'credentials' },
        ),
      );
  }
  const chosen = probes.filter((p) => select(p.id));
  const ids = new Set(chosen.map((p) => p.id));
  // A prerequisite left out by the selection is not waited for.
  const free = chosen.map((p) => (p.needs === undefined || ids.has(p.needs) ? p : { ...p, needs: undefined }));
  const udp = udpGroups(input, select);
  // Once installed, the CNI's VXLAN device holds the port; the overlay is then tested by layer 2's pod cells.
  const held = input.installed ? udp.flatMap((g) => g.senders) : [];
  for (const p of held)
    skipped.push(skip(p.probe, p.source.name, p.target, `after install the VXLAN device holds UDP ${input.vxlanPort}`));
  return {
    probes: free.map(({ needs, ...p }) => (needs === undefined ? p : { ...p, needs })),
    udp: input.installed ? [] : udp,
    skipped: skipped.filter((r) => select(r.id)),
  };
}
