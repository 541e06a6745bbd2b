// Step 12 and after: firewall rules (never disabling the firewall), Defender
// exclusions, and the boot order after a reboot.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { waitForFlannel } from './join.js';
import { hnsNetworkName } from './network.js';
import { WIN } from './paths.js';
import { ensureExternalNetwork } from './prepare.js';
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
  if (model.cluster.cni.backend === 'vxlan') rules.push({ name: 'kubemix-vxlan', protocol: 'UDP', port: String(model.cluster.cni.port), what: 'flannel vxlan' });
  return rules;
}

function ruleInPlace(r: FirewallRule): string {
  const exists = `($null -ne (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue))`;
  return r.from === undefined ? exists : `${exists} -and ((Get-NetFirewallRule -Name ${q(r.name)} | Get-NetFirewallAddressFilter).RemoteAddress -eq ${q(r.from)})`;
}

export function firewall(model: ClusterModel): WindowsScripts {
  const rules = firewallRules(model);
  const apply = rules.map((r) => `if ($null -eq (Get-NetFirewallRule -Name ${q(r.name)} -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name ${q(r.name)} -DisplayName ${q(`kubemix: ${r.what} (${r.port}/${r.protocol.toLowerCase()})`)} -Direction Inbound -Protocol ${r.protocol} -LocalPort ${q(r.port)} -Action Allow | Out-Null
}${r.from === undefined ? '' : `\nSet-NetFirewallRule -Name ${q(r.name)} -RemoteAddress ${q(r.from)}`}`).join('\n');
  return { check: checkThat(rules.map(ruleInPlace).join(' -and ')), apply: `${apply}\n` };
}

const EXCLUDED_PATHS = [WIN.containerdDir, 'C:\\ProgramData\\containerd', WIN.root, WIN.kubeletDir, WIN.cniBin];
const EXCLUDED_PROCESSES = ['containerd.exe', 'containerd-shim-runhcs-v1.exe', 'kubelet.exe', 'kube-proxy.exe', 'flanneld.exe'];

/** Exclusions only: real-time protection stays on. */
export function defenderExclusions(): WindowsScripts {
  const apply = `if ($null -ne (Get-Command -Name 'Add-MpPreference' -ErrorAction SilentlyContinue)) {
  Add-MpPreference -ExclusionPath ${qList(EXCLUDED_PATHS)} -ExclusionProcess ${qList(EXCLUDED_PROCESSES)}
}
`;
  const check = `if ($null -eq (Get-Command -Name 'Get-MpPreference' -ErrorAction SilentlyContinue)) { exit 0 }
$pref = Get-MpPreference
foreach ($p in ${qList(EXCLUDED_PATHS)}) { if (@($pref.ExclusionPath) -notcontains $p) { exit 1 } }
foreach ($p in ${qList(EXCLUDED_PROCESSES)}) { if (@($pref.ExclusionProcess) -notcontains $p) { exit 1 } }
exit 0
`;
  return { check, apply };
}

/**
 * After a reboot the order differs from the first join: the stale subnet.env
 * goes first, then flanneld, and only then kubelet and kube-proxy. In
 * HostProcess mode flanneld and kube-proxy are pods: the kubelet starts them.
 */
export function bootScript(model: ClusterModel, node: PlanNode, hostProcess = false): string {
  return `$ErrorActionPreference = 'Stop'
Start-Transcript -Path ${q(`${WIN.logs}\\kubemix-boot.log`)} -Append | Out-Null
$deadline = (Get-Date).AddSeconds(300)
while ((Get-Service -Name 'containerd').Status -ne 'Running') {
  if ((Get-Date) -gt $deadline) { throw 'containerd did not start' }
  Start-Sleep -Seconds 3
}
${ensureExternalNetwork(model, node)}# A subnet.env from before the reboot describes a network that no longer exists.
if (Test-Path -LiteralPath ${q(WIN.subnetEnv)}) { Remove-Item -Force -LiteralPath ${q(WIN.subnetEnv)} }
${hostProcess ? '' : `Start-Service -Name 'flanneld'
${waitForFlannel(hnsNetworkName(model.cluster.cni), 300)}`}Start-Service -Name 'kubelet'
${hostProcess ? '' : `if ($null -ne (Get-Service -Name 'kube-proxy' -ErrorAction SilentlyContinue)) { Start-Service -Name 'kube-proxy' }
`}Stop-Transcript | Out-Null
`;
}

export const BOOT_TASK = 'kubemix-boot';

export function bootOrder(hostProcess = false): WindowsScripts {
  const manual = hostProcess ? ['kubelet'] : ['kubelet', 'kube-proxy', 'flanneld'];
  const apply = `$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ${q(`-NoProfile -ExecutionPolicy Bypass -File "${WIN.bootScript}"`)}
$trigger = New-ScheduledTaskTrigger -AtStartup
$principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
Register-ScheduledTask -TaskName ${q(BOOT_TASK)} -Action $action -Trigger $trigger -Principal $principal -Force | Out-Null
# The boot task starts these in order; automatic start would race flanneld.
foreach ($name in ${manual.map(q).join(', ')}) { Set-Service -Name $name -StartupType Manual }
`;
  const check = checkThat(`($null -ne (Get-ScheduledTask -TaskName ${q(BOOT_TASK)} -ErrorAction SilentlyContinue)) -and (Get-Service -Name 'kubelet').StartType -eq 'Manual'`);
  return { check, apply };
}
