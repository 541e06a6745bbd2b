// Firewall rules (never disabling the firewall) and Defender exclusions.
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export interface FirewallRule {
  readonly name: string;
  readonly protocol: 'TCP' | 'UDP';
  readonly port: string;
  readonly what: string;
  /** Only from this network (default: any address). */
  readonly from?: string;
}

export function firewallRules(model: ClusterModel): FirewallRule[] {
  const rules: FirewallRule[] = [
    // SSH from the node network only, as the unattended install sets it up.
    { name: 'kubemix-ssh', protocol: 'TCP', port: '22', what: 'SSH', from: model.cluster.network.nodeCidr },
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

function ruleInPlace(r: FirewallRule): string {
  const exists = `($null -ne (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue))`;
  return r.from === undefined
    ? exists
    : `${exists} -and ((Get-NetFirewallRule -Name ${q(r.name)} | Get-NetFirewallAddressFilter).RemoteAddress -eq ${q(r.from)})`;
}

export function firewall(model: ClusterModel): WindowsScripts {
  const rules = firewallRules(model);
  const apply = rules
    .map(
      (r) => `if ($null -eq (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name ${q(r.name)} -DisplayName ${q(`kubemix: ${r.what} (${r.port}/${r.protocol.toLowerCase()})`)} -Direction Inbound -Protocol ${r.protocol} -LocalPort ${q(r.port)} -Action Allow | Out-Null
}${r.from === undefined ? '' : `\nSet-NetFirewallRule -Name ${q(r.name)} -RemoteAddress ${q(r.from)}`}`,
    )
    .join('\n');
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
