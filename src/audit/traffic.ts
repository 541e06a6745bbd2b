// The traffic audit (`kubemix plan --audit`, beside the authorization audit):
// every flow the cluster needs toward each node (flows.ts) decided against
// the inbound firewall that node gets from the plan (firewall.ts). A flow no
// rule allows fails the audit: a node that drops kubemix's ping, the VXLAN
// port or the API server's calls to its kubelet is a cluster that does not
// come up, found here before anything is installed. Pure.
import { contains, parseCidr, parseIp } from '../net/cidr.js';
import type { ClusterModel } from '../model/resolve.js';
import type { AuditInput } from './components.js';
import { nodeFirewalls, type NodeFirewall, type RuleFact } from './firewall.js';
import { neededFlows, type Flow } from './flows.js';

export interface TrafficDecision {
  readonly flow: Flow;
  readonly allowed: boolean;
  /** The rule that allows it (`kubemix-icmpv4-echo (task-deploy-cluster/win-01/win-firewall)`), or why not. */
  readonly by: string;
}

export interface TrafficResult {
  readonly firewalls: readonly NodeFirewall[];
  readonly decisions: readonly TrafficDecision[];
  readonly ok: boolean;
}

/** An address or CIDR as a network (an address is its /32). */
function network(text: string): ReturnType<typeof parseCidr> {
  if (text.includes('/')) return parseCidr(text);
  const ip = parseIp(text);
  return ip === undefined ? undefined : { family: ip.family, base: ip.value, prefix: ip.family === 4 ? 32 : 128 };
}

/** Every source the flow names lies inside one of the rule's remote addresses. */
function coversSources(rule: RuleFact, flow: Flow): boolean {
  if (rule.remote === 'any') return true;
  if (flow.from.addresses === 'any') return false;
  const remote = rule.remote.map(network);
  return flow.from.addresses.every((a) => {
    const n = network(a);
    return (
      n !== undefined &&
      remote.some((r) => r !== undefined && r.prefix <= n.prefix && contains(r, { family: n.family, value: n.base }))
    );
  });
}

const range = (p: string): [number, number] => {
  const [a, b] = p.split('-').map(Number);
  return [a ?? NaN, b ?? a ?? NaN];
};

function coversPort(rule: RuleFact, flow: Flow): boolean {
  if (rule.protocol === 'any') return rule.ports === 'any';
  if (flow.protocol !== rule.protocol) return false;
  if (flow.protocol === 'icmpv4')
    return rule.icmpTypes === 'any' || (flow.icmpType !== undefined && rule.icmpTypes.includes(flow.icmpType));
  if (rule.ports === 'any') return true;
  if (flow.port === undefined) return false;
  const [lo, hi] = range(flow.port);
  return rule.ports.some((p) => {
    const [a, b] = range(p);
    return a <= lo && hi <= b;
  });
}

function decide(fw: NodeFirewall | undefined, flow: Flow): TrafficDecision {
  if (fw === undefined || fw.kind === 'none')
    return { flow, allowed: true, by: `nothing filters: ${fw?.baseline ?? 'no firewall rendered'}` };
  // Before node prep only what the OS, the install media and the checked prerequisites allow is in place.
  const rules = fw.rules.filter((r) => flow.phase === 'installed' || r.from === 'start');
  const rule = rules.find((r) => coversPort(r, flow) && coversSources(r, flow));
  if (rule !== undefined) return { flow, allowed: true, by: `${rule.name} (${rule.origin})` };
  const late = fw.rules.find((r) => coversPort(r, flow) && coversSources(r, flow));
  if (late !== undefined)
    return {
      flow,
      allowed: false,
      by: `only ${late.name} (${late.origin}) allows it, which node prep adds after task-run-validations needs it`,
    };
  return { flow, allowed: false, by: `no rule of the ${fw.kind} the plan renders allows it (${fw.baseline})` };
}

export function auditTraffic(model: ClusterModel, input: AuditInput): TrafficResult {
  const firewalls = nodeFirewalls(model, input);
  const byNode = new Map(firewalls.map((f) => [f.node, f] as const));
  const decisions = neededFlows(model).map((f) => decide(byNode.get(f.to), f));
  return { firewalls, decisions, ok: decisions.every((d) => d.allowed) };
}

/** `udp 4789`, `icmpv4 type 8`, `tcp 30000-32767`, `any protocol`. */
export function flowText(f: Flow): string {
  if (f.protocol === 'icmpv4') return `icmpv4 type ${f.icmpType ?? 'any'}`;
  if (f.protocol === 'any') return 'any protocol';
  return `${f.protocol} ${f.port ?? 'any port'}`;
}

export function trafficText(r: TrafficResult): string {
  const lines: string[] = [];
  for (const fw of r.firewalls) {
    const mine = r.decisions.filter((d) => d.flow.to === fw.node);
    if (mine.length === 0) continue;
    lines.push('', `traffic to ${fw.node} (${fw.kind}: ${fw.baseline})`);
    for (const d of mine) {
      const from =
        d.flow.from.addresses === 'any'
          ? d.flow.from.label
          : `${d.flow.from.label} (${d.flow.from.addresses.join(', ')})`;
      lines.push(
        `  ${d.allowed ? 'ok  ' : 'FAIL'} ${flowText(d.flow)} from ${from}: ${d.flow.why}  [${d.by}]  (${d.flow.source})`,
      );
    }
  }
  const failed = r.decisions.filter((d) => !d.allowed).length;
  lines.push(
    '',
    r.ok
      ? 'traffic audit: every needed flow is allowed by the firewall each node gets'
      : `traffic audit FAILED: ${failed} flow(s) dropped`,
  );
  return `${lines.join('\n').trimStart()}\n`;
}
