// The inbound firewall each node gets from the plan, read back from what the
// plan ships (the scripts and files), never from the data they were rendered
// from: a rule dropped from a script is a rule the node does not get.
// Windows: New-/Set-/Remove-/Disable-NetFirewallRule statements of the
// node's task applies and install media. Linux cluster nodes: the firewalld
// task's `firewall-cmd` words. The services node: kubemix renders no packet
// filter for it. Pure.
import { driverFor } from '../drivers/index.js';
import { INSTALL_MEDIA_FILES } from '../drivers/install-media.js';
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import type { Plan } from '../plan/types.js';
import type { AuditInput } from './components.js';
import { powershellStatements, type PsStatement } from './ps-words.js';

export type Protocol = 'tcp' | 'udp' | 'icmpv4' | 'any';

/** One inbound allow rule as the node will hold it. */
export interface RuleFact {
  readonly name: string;
  readonly protocol: Protocol;
  /** Local ports (`22`, `30000-32767`); `any` for every port (and for ICMP). */
  readonly ports: readonly string[] | 'any';
  /** ICMP types allowed (`8`); `any` for every type. */
  readonly icmpTypes: readonly string[] | 'any';
  /** Remote addresses (IPs, CIDRs); `any` for every address. */
  readonly remote: readonly string[] | 'any';
  /** Where the rule comes from: a task id or a file. */
  readonly origin: string;
  /**
   * When it is in place: `start` (the OS's own baseline, the install media, a
   * prerequisite the validations check) or `node-prep` (a task of `kubemix up`,
   * so not yet when task-run-validations probes the nodes).
   */
  readonly from: RulePhase;
}

export type RulePhase = 'start' | 'node-prep';

export interface NodeFirewall {
  readonly node: string;
  /** `windows-firewall`: default inbound block; `firewalld`: the public zone when it runs; `none`: nothing filters. */
  readonly kind: 'windows-firewall' | 'firewalld' | 'none';
  readonly rules: readonly RuleFact[];
  /** What the node allows before anything kubemix renders, and the source of that fact. */
  readonly baseline: string;
}

/**
 * firewalld's public zone, the default zone of the distributions that run it
 * (firewalld.zones(5); /usr/lib/firewalld/zones/public.xml): services ssh and
 * dhcpv6-client, and every ICMP type unless an icmp-block says otherwise.
 */
const publicZone = (name: string, protocol: Protocol, ports: RuleFact['ports']): RuleFact => ({
  name: `public: ${name}`,
  protocol,
  ports,
  icmpTypes: 'any',
  remote: 'any',
  origin: 'firewalld public zone',
  from: 'start',
});
const FIREWALLD_PUBLIC: readonly RuleFact[] = [
  publicZone('service ssh', 'tcp', ['22']),
  publicZone('service dhcpv6-client', 'udp', ['546']),
  publicZone('ICMP (no icmp-block)', 'icmpv4', 'any'),
];

export function nodeFirewalls(model: ClusterModel, input: AuditInput): NodeFirewall[] {
  return input.plan.nodes.map((n): NodeFirewall => {
    if (n.osFamily === 'windows')
      return {
        node: n.name,
        kind: 'windows-firewall',
        rules: windowsRules(model, input, n),
        baseline:
          'Windows Firewall on, inbound default action Block; the built-in ICMPv4 echo rule ships disabled (learn.microsoft.com, "Windows Firewall rules")',
      };
    const task = input.plan.tasks.find((t) => t.host === n.name && t.name === 'firewall');
    if (task === undefined)
      return {
        node: n.name,
        kind: 'none',
        rules: [],
        baseline:
          n.role === 'services'
            ? 'no packet filter rendered; Debian and Ubuntu (the services distros) enable none by default'
            : 'no packet filter rendered',
      };
    return {
      node: n.name,
      kind: 'firewalld',
      rules: [...FIREWALLD_PUBLIC, ...firewalldRules(task)],
      baseline:
        'firewalld public zone when firewalld runs (ssh, dhcpv6-client, ICMP); nothing filters when it does not',
    };
  });
}

/** `--add-port=P/proto` opens a port in the default zone; `--zone=trusted --add-source=CIDR` trusts a source. */
function firewalldRules(task: Plan['tasks'][number]): RuleFact[] {
  const out: RuleFact[] = [];
  for (const line of task.apply.script.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'firewall-cmd') continue;
    const trusted = words.includes('--zone=trusted');
    for (const w of words) {
      const port = /^--add-port=(\d+(?:-\d+)?)\/(tcp|udp)$/.exec(w);
      if (port !== null && !trusted)
        out.push({
          name: `port ${port[1]}/${port[2]}`,
          protocol: port[2] as Protocol,
          ports: [port[1] ?? ''],
          icmpTypes: 'any',
          remote: 'any',
          origin: task.id,
          from: 'node-prep',
        });
      const source = /^--add-source=(\S+)$/.exec(w);
      if (source !== null && trusted)
        out.push({
          name: `trusted source ${source[1]}`,
          protocol: 'any',
          ports: 'any',
          icmpTypes: 'any',
          remote: [source[1] ?? ''],
          origin: task.id,
          from: 'node-prep',
        });
    }
  }
  return out;
}

/**
 * The scripts that shape a Windows node's firewall, in the order they run:
 * the first-boot script of its install media (the driver says where it lies),
 * then the plan's tasks on the node.
 */
function windowsScripts(
  model: ClusterModel,
  input: AuditInput,
  node: PlanNode,
): { origin: string; text: string; from: RulePhase }[] {
  const place = driverFor(model.cluster.driver).installMedia(node, model);
  const setup = place === undefined ? undefined : `${place.dir}/${INSTALL_MEDIA_FILES.setupScript}`;
  const media = input.files
    .filter((f) => f.node === place?.host && f.remotePath === setup)
    .map((f) => ({
      origin: `install media ${INSTALL_MEDIA_FILES.setupScript}`,
      text: f.content,
      from: 'start' as const,
    }));
  const tasks = input.plan.tasks
    .filter((t) => t.host === node.name && t.apply.shell === 'powershell')
    .map((t) => ({ origin: t.id, text: t.apply.script, from: 'node-prep' as const }));
  return [...media, ...tasks];
}

/**
 * An existing Windows host must already answer ICMPv4 echo from the node
 * network: its validation task checks it (drivers/existing/checks.ts) before
 * any node is pinged, so the audit counts that as a rule in place from the start.
 */
function checkedPrerequisites(input: AuditInput, node: string): RuleFact[] {
  const nodeCidr = input.plan.cluster.network.nodeCidr;
  return input.plan.tasks
    .filter(
      (t) =>
        t.host === node &&
        t.stage === 'task-run-validations' &&
        /Get-NetFirewallPortFilter -Protocol 'ICMPv4'/.test(t.apply.script) &&
        t.apply.script.includes(`'${nodeCidr}'`),
    )
    .map((t) => ({
      name: 'prerequisite: ICMPv4 echo from the node network',
      protocol: 'icmpv4' as const,
      ports: 'any' as const,
      icmpTypes: ['8'],
      remote: [nodeCidr],
      origin: `checked by ${t.id}`,
      from: 'start' as const,
    }));
}

const INBOUND_ALLOW = (s: PsStatement): boolean =>
  (s.params.get('direction')?.[0] ?? 'Inbound').toLowerCase() === 'inbound' &&
  (s.params.get('action')?.[0] ?? 'Allow').toLowerCase() === 'allow';

function windowsRules(model: ClusterModel, input: AuditInput, node: PlanNode): RuleFact[] {
  const rules = new Map<string, RuleFact & { enabled: boolean }>();
  for (const { origin, text, from } of windowsScripts(model, input, node)) {
    for (const s of powershellStatements(text, FIREWALL_COMMANDS)) {
      const name = s.params.get('name')?.[0] ?? '';
      const old = rules.get(name);
      switch (s.command) {
        case 'new-netfirewallrule':
          // Rule names are unique: a second New of a name kubemix already made changes nothing (its scripts guard it).
          if (old === undefined && INBOUND_ALLOW(s))
            rules.set(name, { ...fromNew(s, name, origin, from), enabled: enabledOf(s, true) });
          break;
        case 'set-netfirewallrule':
          if (old !== undefined)
            rules.set(name, {
              ...old,
              ...(s.params.has('remoteaddress') ? { remote: addresses(s.params.get('remoteaddress')) } : {}),
              enabled: enabledOf(s, old.enabled),
            });
          break;
        case 'remove-netfirewallrule':
          rules.delete(name);
          break;
        case 'disable-netfirewallrule':
          if (old !== undefined) rules.set(name, { ...old, enabled: false });
          break;
      }
    }
  }
  const kept = [...rules.values()].filter((r) => r.enabled).map(({ enabled: _enabled, ...r }) => r);
  return [...checkedPrerequisites(input, node.name), ...kept];
}

const FIREWALL_COMMANDS = [
  'New-NetFirewallRule',
  'Set-NetFirewallRule',
  'Remove-NetFirewallRule',
  'Disable-NetFirewallRule',
] as const;

function enabledOf(s: PsStatement, otherwise: boolean): boolean {
  const v = s.params.get('enabled')?.[0];
  return v === undefined ? otherwise : v.toLowerCase() === 'true';
}

function addresses(values: readonly string[] | undefined): readonly string[] | 'any' {
  const list = values ?? [];
  return list.length === 0 || list.some((v) => v.toLowerCase() === 'any') ? 'any' : list;
}

function fromNew(s: PsStatement, name: string, origin: string, from: RulePhase): RuleFact {
  const proto = (s.params.get('protocol')?.[0] ?? 'Any').toLowerCase();
  const protocol: Protocol = proto === 'tcp' || proto === 'udp' || proto === 'icmpv4' ? proto : 'any';
  const ports = s.params.get('localport');
  const icmp = s.params.get('icmptype');
  return {
    name,
    protocol,
    ports: ports === undefined || ports.some((p) => p.toLowerCase() === 'any') ? 'any' : ports,
    icmpTypes: icmp === undefined || icmp.some((t) => t.toLowerCase() === 'any') ? 'any' : icmp,
    remote: addresses(s.params.get('remoteaddress')),
    origin,
    from,
  };
}
