// Judges the connectivity matrix: a client pod's log (KUBEMIX-CELL lines)
// against the cells it was given, with the likely broken layer for each
// failure (layer 1's results where they explain it). Pure.
import type { CheckResult } from '../types.js';
import type { ExpectedNode } from './expect.js';
import { NEVER_ANSWERED, SERVICES, type Cell } from './probes.js';

export interface CellLine {
  readonly ok: boolean;
  readonly tries: number;
  readonly held: number;
  readonly output: string;
}

/** `KUBEMIX-CELL <id> <ok|fail> <tries> <held> <output…>` lines by id. */
export function parseCellLines(log: string): Map<string, CellLine> {
  const out = new Map<string, CellLine>();
  for (const line of log.split(/\r?\n/)) {
    const m = /^KUBEMIX-CELL (\S+) (ok|fail) (\d+) (\d+) ?(.*)$/.exec(line.trim());
    if (m !== null)
      out.set(m[1]!, { ok: m[2] === 'ok', tries: Number(m[3]), held: Number(m[4]), output: m[5]!.trim() });
  }
  return out;
}

export interface JudgeContext {
  readonly nodes: readonly ExpectedNode[];
  /** Layer 1's results of this run (empty when it was skipped). */
  readonly underlay: readonly CheckResult[];
  /** Why a source's client pod gave no lines, when it did not (its state, placement). */
  readonly podTrouble: ReadonlyMap<string, { readonly detail: string; readonly cause?: string }>;
  /** Every cell's result so far, to explain service cells by pod cells. */
  readonly osOf: (node: string) => 'linux' | 'windows' | undefined;
  /** The nodes CoreDNS runs on (empty when unknown): a name a pod resolves may be answered across the overlay. */
  readonly dnsNodes?: readonly string[];
}

/** A failed layer-1 check between two nodes, in either direction. */
function failedBetween(underlay: readonly CheckResult[], a: string, b: string): CheckResult | undefined {
  return underlay.find(
    (u) => u.status === 'fail' && ((u.source === a && u.target === b) || (u.source === b && u.target === a)),
  );
}

const named = (u: CheckResult): string => `underlay ${u.probe} ${u.source} → ${u.target} (${u.detail})`;

function underlayCause(c: Cell, ctx: JudgeContext): string | undefined {
  const bad = failedBetween(ctx.underlay, c.source, c.target);
  return bad === undefined ? undefined : `layer 1 already failed here: ${named(bad)}`;
}

/** The nodes whose echo pods a Service cell never heard from (`never answered by echo-a echo-b (…)`). */
function silentNodes(output: string): string[] {
  const m = new RegExp(`${NEVER_ANSWERED} ([^(]*)`).exec(output);
  return (m?.[1] ?? '')
    .trim()
    .split(/\s+/)
    .filter((n) => n.startsWith('echo-'))
    .map((n) => n.slice('echo-'.length));
}

/** A layer-1 failure between `from` and a node whose backend never answered it, as a cause. */
function silentBackendCause(from: string, output: string, underlay: readonly CheckResult[]): string | undefined {
  for (const node of silentNodes(output)) {
    const bad = failedBetween(underlay, from, node);
    if (bad !== undefined)
      return `the backend on ${node} never answered, and layer 1 already failed there: ${named(bad)}`;
  }
  return undefined;
}

/** A layer-1 failure between `from` and a node CoreDNS runs on: its answers cross that path. */
function dnsAcrossCause(from: string, ctx: JudgeContext): string | undefined {
  for (const node of ctx.dnsNodes ?? []) {
    const bad = node === from ? undefined : failedBetween(ctx.underlay, from, node);
    if (bad !== undefined)
      return `CoreDNS on ${node} answers from across the overlay, and layer 1 already failed there: ${named(bad)}`;
  }
  return undefined;
}

/** A tool of the probe image that did not run at all: no network path is to blame. */
const BROKEN_TOOL = /Segmentation fault|applet not found|: not found\b|Illegal instruction|Bus error/;

function causeOf(c: Cell, ctx: JudgeContext, output: string): string {
  const from = ctx.osOf(c.source);
  const broken = from === 'linux' ? BROKEN_TOOL.exec(output) : null;
  if (broken !== null)
    return `the probe image's own tools failed on ${c.source} (${broken[0]}), not the network: verify's Linux probe image must be a BusyBox with sh, wget, timeout, nslookup, nc and httpd (spec.verify.probeImages, --probe-image)`;
  if (c.probe === 'egress')
    return from === 'windows'
      ? `egress from Windows pods: the HNS network's outbound NAT (the ExceptionList must not cover ${c.target}), a firewall on the way, or ${c.target} itself`
      : `egress from Linux pods: the CNI's masquerade (flannel --ip-masq / Calico natOutgoing), a firewall on the way, or ${c.target} itself`;
  if (c.probe === 'host-pod')
    return (
      underlayCause(c, ctx) ??
      (from === 'windows'
        ? 'the Windows host reaching pods: the HNS host endpoint flannel creates (vEthernet) and its routes to the pod CIDR'
        : "the host reaching pods: the node's route to the pod CIDR (cni0, flannel.<VNI>) or a host firewall (iptables FORWARD/INPUT)")
    );
  if (c.probe === 'pod-ip') {
    const under = underlayCause(c, ctx);
    if (under !== undefined) return under;
    const to = ctx.osOf(c.target);
    if (c.source === c.target)
      return `the CNI on ${c.source} does not connect its own pods (${from === 'windows' ? 'the HNS network / flannel CNI config' : 'the cni0 bridge'})`;
    if (from !== to)
      return 'Windows↔Linux overlay: VNI or UDP port mismatch (flannel on Windows needs VNI 4096, port 4789), a firewall on 4789, or the Windows outbound NAT ExceptionList lacking the pod or node CIDR';
    return from === 'windows'
      ? 'Windows↔Windows overlay: the HNS remote endpoints or routes flanneld programs on each node'
      : 'pod routes between the nodes: the CNI pod on either node, or the MTU of the overlay';
  }
  if (c.probe === 'pod-dns' || (c.probe === 'svc-dns' && /resolve|name|nslookup|bad address/i.test(output)))
    return (
      dnsAcrossCause(c.source, ctx) ??
      (from === 'windows'
        ? 'DNS on Windows pods: the kube-dns ClusterIP must be reachable through kube-proxy on Windows, and the pod DNS suffix list set'
        : 'CoreDNS or the kube-dns Service: check the coredns cell and kube-proxy on the node')
    );
  const silent = silentBackendCause(c.source, output, ctx.underlay);
  if (silent !== undefined) return silent;
  const backs = c.target === SERVICES.windows ? 'Windows' : c.target === SERVICES.linux ? 'Linux' : 'both OSes';
  return `kube-proxy on ${c.source} (${from === 'windows' ? 'its HNS load balancers' : 'iptables/IPVS rules'}) for a Service backed by ${backs}; if the pod-ip cells to those backends fail too, the overlay`;
}

/** The results of one source's cells from its client pod's log. */
export function judgeCells(cells: readonly Cell[], log: string | undefined, ctx: JudgeContext): CheckResult[] {
  const lines = parseCellLines(log ?? '');
  return cells.map((c): CheckResult => {
    const base = { id: c.id, layer: 'cluster' as const, probe: c.probe, source: c.source, target: c.target };
    const command =
      c.kind === 'http'
        ? `GET http://${c.arg}/ (from pod on ${c.source})`
        : `resolve ${c.arg} (from pod on ${c.source})`;
    const line = lines.get(c.id);
    if (line === undefined) {
      const trouble = ctx.podTrouble.get(c.source);
      return {
        ...base,
        status: 'fail',
        detail: `no result: ${trouble?.detail ?? 'the probe pod printed no line for this cell'}`,
        command,
        ...(trouble?.cause === undefined ? {} : { cause: trouble.cause }),
      };
    }
    const answered = c.answers === undefined || c.answers.some((a) => line.output.includes(a));
    if (line.ok && answered)
      return {
        ...base,
        status: 'pass',
        detail: `${line.tries === 1 ? 'first try' : `after ${line.tries} tries`}, held ${line.held}`,
      };
    const detail = !line.ok
      ? line.output.startsWith(NEVER_ANSWERED)
        ? `${line.output} in ${line.tries} tries`
        : line.held > 0
          ? `succeeded, then failed again within the hold window (${line.held} of hold)`
          : `never succeeded in ${line.tries} tries`
      : `answered by none of ${c.answers?.join(', ') ?? ''}`;
    return { ...base, status: 'fail', detail, command, output: line.output, cause: causeOf(c, ctx, line.output) };
  });
}

/** NodePort from the deployer through one node: the answer must name an echo pod. */
export function judgeNodePort(
  node: ExpectedNode,
  url: string,
  outcome: { readonly ok: boolean; readonly output: string },
  underlay: readonly CheckResult[],
): CheckResult {
  const base = {
    id: `cluster/nodeport/deployer/${node.name}`,
    layer: 'cluster' as const,
    probe: 'nodeport',
    source: 'deployer',
    target: node.name,
  };
  if (outcome.ok && /echo-/.test(outcome.output))
    return { ...base, status: 'pass', detail: `answered by ${outcome.output.trim()}` };
  const down = underlay.find((u) => u.status === 'fail' && u.target === node.name && u.probe === 'ping');
  const silent = silentBackendCause(node.name, outcome.output, underlay);
  return {
    ...base,
    status: 'fail',
    detail: outcome.ok
      ? 'answered, but not by an echo pod'
      : outcome.output.startsWith(NEVER_ANSWERED)
        ? outcome.output
        : 'no answer',
    command: `GET ${url}`,
    output: outcome.output,
    cause:
      down !== undefined
        ? `layer 1: ${node.name} does not answer ping`
        : silent !== undefined
          ? silent
          : node.os === 'windows'
            ? 'kube-proxy on Windows (NodePort load balancer in HNS) or the Windows firewall for the NodePort range'
            : "kube-proxy's NodePort rules on the node, or a firewall for 30000-32767/tcp",
  };
}
