// Firewall rules (never disabling the firewall) and Defender exclusions.
import type { ClusterModel } from '../../model/resolve.js';
import { withDottedMask } from '../../net/cidr.js';
import { WIN } from './paths.js';
import { q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export interface FirewallRule {
  readonly name: string;
  readonly protocol: 'TCP' | 'UDP' | 'ICMPv4';
  /** TCP/UDP: the local port or range. */
  readonly port?: string;
  /** ICMPv4: the message type allowed in (8: echo request). */
  readonly icmpType?: number;
  readonly what: string;
  /** Only from this network (default: any address). */
  readonly from?: string;
}

/** ICMPv4 echo request (RFC 792 type 8). */
export const ICMP_ECHO_REQUEST = 8;

/**
 * Inbound ICMPv4 echo from the node network. Windows Firewall drops it by
 * default (its own "File and Printer Sharing (Echo Request - ICMPv4-In)"
 * rule ships disabled), and kubemix pings every node: task-run-validations,
 * the node checks of upgrade and patch, verify's ping and MTU cells.
 * Shared with the install media's first-boot script (same name: one rule).
 */
export function icmpEchoRule(nodeCidr: string): FirewallRule {
  return {
    name: 'kubemix-icmpv4-echo',
    protocol: 'ICMPv4',
    icmpType: ICMP_ECHO_REQUEST,
    what: 'ICMPv4 echo request',
    from: nodeCidr,
  };
}

export function firewallRules(model: ClusterModel): FirewallRule[] {
  const nodeCidr = model.cluster.network.nodeCidr;
  const rules: FirewallRule[] = [
    // SSH from the node network only, as the unattended install sets it up.
    { name: 'kubemix-ssh', protocol: 'TCP', port: '22', what: 'SSH', from: nodeCidr },
    icmpEchoRule(nodeCidr),
    { name: 'kubemix-kubelet', protocol: 'TCP', port: '10250', what: 'kubelet API' },
    { name: 'kubemix-kube-proxy-health', protocol: 'TCP', port: '10256', what: 'kube-proxy health' },
    { name: 'kubemix-nodeports-tcp', protocol: 'TCP', port: '30000-32767', what: 'NodePorts' },
    { name: 'kubemix-nodeports-udp', protocol: 'UDP', port: '30000-32767', what: 'NodePorts' },
  ];
  const vxlan = model.overlay.vxlan;
  if (vxlan !== undefined)
    rules.push({
      name: 'kubemix-vxlan',
      protocol: 'UDP',
      port: String(vxlan.port),
      what: `${model.overlay.plugin === 'calico' ? 'Calico' : 'flannel'} vxlan`,
    });
  return rules;
}

/** How a rule reads in a description: `22/tcp`, `icmpv4 type 8`. */
export function ruleLabel(r: FirewallRule): string {
  return r.protocol === 'ICMPv4' ? `icmpv4 type ${r.icmpType ?? 'any'}` : `${r.port ?? ''}/${r.protocol.toLowerCase()}`;
}

/**
 * The ways Windows may report a rule's remote address: as given (`10.0.0.0/24`)
 * or with a dotted mask (`10.0.0.0/255.255.255.0`, how the firewall API stores
 * a subnet [I: not observed here, no Windows host]). A check accepts either.
 */
export function remoteAddressForms(cidr: string): string[] {
  const masked = withDottedMask(cidr);
  return masked === undefined ? [cidr] : [cidr, masked];
}

function ruleInPlace(r: FirewallRule): string {
  const exists = `($null -ne (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue))`;
  return r.from === undefined
    ? exists
    : `${exists} -and (@((Get-NetFirewallRule -Name ${q(r.name)} | Get-NetFirewallAddressFilter).RemoteAddress | Where-Object { ${qList(remoteAddressForms(r.from))} -contains $_ }).Count -gt 0)`;
}

/** The New-NetFirewallRule statement of one rule (inbound, allow). */
export function newRuleStatement(r: FirewallRule): string {
  const match =
    r.protocol === 'ICMPv4'
      ? `-Protocol ICMPv4 -IcmpType ${q(String(r.icmpType ?? ICMP_ECHO_REQUEST))}`
      : `-Protocol ${r.protocol} -LocalPort ${q(r.port ?? '')}`;
  return `New-NetFirewallRule -Name ${q(r.name)} -DisplayName ${q(`kubemix: ${r.what} (${ruleLabel(r)})`)} -Direction Inbound ${match} -Action Allow | Out-Null`;
}

/** Create the rule when missing; a rule limited to a network gets that network (again) every time. */
export function ruleScript(r: FirewallRule): string {
  return `if ($null -eq (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue)) {
  ${newRuleStatement(r)}
}${r.from === undefined ? '' : `\nSet-NetFirewallRule -Name ${q(r.name)} -RemoteAddress ${q(r.from)} -Enabled True`}`;
}

export function firewall(model: ClusterModel): WindowsScripts {
  const rules = firewallRules(model);
  const apply = rules.map(ruleScript).join('\n');
  return { check: checkThat(rules.map(ruleInPlace).join(' -and ')), apply: `${apply}\n` };
}

const EXCLUDED_PATHS = [WIN.containerdDir, 'C:\\ProgramData\\containerd', WIN.root, WIN.kubeletDir, WIN.cniBin];
const EXCLUDED_PROCESSES = ['containerd.exe', 'containerd-shim-runhcs-v1.exe', 'kubelet.exe', 'kube-proxy.exe'];

/** Exclusions only: real-time protection stays on. flanneld.exe only where flannel runs. */
export function defenderExclusions(flannel = true): WindowsScripts {
  const processes = flannel ? [...EXCLUDED_PROCESSES, 'flanneld.exe'] : EXCLUDED_PROCESSES;
  const apply = `if ($null -ne (Get-Command -Name 'Add-MpPreference' -ErrorAction SilentlyContinue)) {
  Add-MpPreference -ExclusionPath ${qList(EXCLUDED_PATHS)} -ExclusionProcess ${qList(processes)}
}
`;
  const check = `if ($null -eq (Get-Command -Name 'Get-MpPreference' -ErrorAction SilentlyContinue)) { exit 0 }
$pref = Get-MpPreference
foreach ($p in ${qList(EXCLUDED_PATHS)}) { if (@($pref.ExclusionPath) -notcontains $p) { exit 1 } }
foreach ($p in ${qList(processes)}) { if (@($pref.ExclusionProcess) -notcontains $p) { exit 1 } }
exit 0
`;
  return { check, apply };
}
