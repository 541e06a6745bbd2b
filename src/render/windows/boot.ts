// After a reboot: boot.ps1, run by a scheduled task at startup, walks the
// decision table of boot-rules.ts until the kubelet runs. It has no
// deadline: an error is logged and retried after a back-off up to a minute.
// The kubelet restarts on failure (SCM failure actions) and runs the pod
// network and kube-proxy pods, so the script only has to get the node ready
// for it once per boot.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { BOOT_BACKOFF, BOOT_FACTS, bootRules, type BootAction, type BootFact, type BootRule } from './boot-rules.js';
import { EXTERNAL_NETWORK } from './network.js';
import { WIN } from './paths.js';
import { createExternalNetwork } from './prepare.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export const BOOT_TASK = 'kubemix-boot';

function condition(rule: BootRule): string {
  const parts = Object.entries(rule.when).map(([fact, value]) => (value ? `$f.${fact}` : `(-not $f.${fact})`));
  return parts.join(' -and ');
}

/** Get-KubemixBootAction: the table as ordered if-statements, first match wins. */
export function bootActionFunction(rules: readonly BootRule[]): string {
  const lines = rules.map((r) =>
    Object.keys(r.when).length === 0 ? `  return ${q(r.action)}` : `  if (${condition(r)}) { return ${q(r.action)} }`,
  );
  return `function Get-KubemixBootAction($f) {\n${lines.join('\n')}\n}\n`;
}

/** How each fact is observed on the node (PowerShell expressions). */
const FACT_EXPRESSIONS: Record<BootFact, string> = {
  RuntimeRunning: "(Test-KubemixRunning 'containerd')",
  ExternalNetwork: `($null -ne (Get-KubemixHnsNetwork -Name ${q(EXTERNAL_NETWORK.name)}))`,
  SubnetEnvStale: '$stale',
  KubeletRunning: "(Test-KubemixRunning 'kubelet')",
};

/** Get-KubemixBootFacts observes only the facts the table reads. */
function factsFunction(rules: readonly BootRule[]): string {
  const used = BOOT_FACTS.filter((f) => rules.some((r) => f in r.when));
  const subnet = used.includes('SubnetEnvStale')
    ? `  $boot = (Get-CimInstance -ClassName Win32_OperatingSystem).LastBootUpTime
  $subnet = Get-Item -LiteralPath ${q(WIN.subnetEnv)} -ErrorAction SilentlyContinue
  $stale = ($null -ne $subnet) -and ($subnet.LastWriteTime -lt $boot)
`
    : '';
  return `function Test-KubemixRunning([string]$Name) {
  $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
  return ($null -ne $svc -and $svc.Status -eq 'Running')
}
function Get-KubemixBootFacts {
${subnet}  return [pscustomobject]@{
${used.map((f) => `    ${f} = ${FACT_EXPRESSIONS[f]}`).join('\n')}
  }
}
`;
}

function actionBody(action: BootAction, model: ClusterModel, node: PlanNode): string {
  switch (action) {
    case 'start-runtime':
      return "Start-Service -Name 'containerd'";
    case 'create-external-network':
      return createExternalNetwork(model, node).trimEnd();
    case 'drop-stale-subnet-env':
      return `Remove-Item -Force -LiteralPath ${q(WIN.subnetEnv)}`;
    case 'start-kubelet':
      return "Start-Service -Name 'kubelet'";
    case 'done':
      return '';
  }
}

function actionFunction(rules: readonly BootRule[], model: ClusterModel, node: PlanNode): string {
  const cases = [...new Set(rules.map((r) => r.action))]
    .map((a) => [a, actionBody(a, model, node)] as const)
    .filter(([, body]) => body !== '');
  const indent = (text: string): string =>
    text
      .split('\n')
      .map((l) => `      ${l}`)
      .join('\n');
  return `function Invoke-KubemixBootAction([string]$Action) {
  switch ($Action) {
${cases.map(([a, body]) => `    ${q(a)} {\n${indent(body)}\n    }`).join('\n')}
  }
}
`;
}

export function bootScript(model: ClusterModel, node: PlanNode): string {
  const rules = bootRules(model.overlay.plugin);
  const hns = rules.some((r) => 'ExternalNetwork' in r.when) ? HNS_FUNCTIONS : '';
  return `$ErrorActionPreference = 'Stop'
Start-Transcript -Path ${q(`${WIN.logs}\\kubemix-boot.log`)} -Append | Out-Null
${hns}${factsFunction(rules)}${bootActionFunction(rules)}${actionFunction(rules, model, node)}$delay = ${BOOT_BACKOFF.firstSeconds}
while ($true) {
  try {
    $facts = Get-KubemixBootFacts
    $action = Get-KubemixBootAction $facts
    Write-Output ((Get-Date -Format 'o') + ' ' + $action)
    if ($action -eq 'done') { break }
    Invoke-KubemixBootAction -Action $action
    $delay = ${BOOT_BACKOFF.firstSeconds}
    continue
  } catch {
    # Nothing here is fatal: log it and try again after the same back-off as a wait.
    Write-Warning ("boot step failed: " + $_.Exception.Message)
  }
  Start-Sleep -Seconds $delay
  $delay = [Math]::Min($delay * 2, ${BOOT_BACKOFF.maxSeconds})
}
Stop-Transcript | Out-Null
`;
}

/**
 * The kubelet stays Manual (automatic start would race the External network
 * and the stale subnet.env with flannel, or calico-node-windows' network
 * rebuild), restarts on failure without a limit (the SCM repeats the last
 * failure action for every later failure: MS-SCMR SERVICE_FAILURE_ACTIONS),
 * and the scheduled task runs without a time limit and is restarted by the
 * Task Scheduler if it dies.
 */
export function bootOrder(): WindowsScripts {
  const apply = `${SERVICE_FUNCTIONS}$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ${q(`-NoProfile -ExecutionPolicy Bypass -File "${WIN.bootScript}"`)}
$trigger = New-ScheduledTaskTrigger -AtStartup
$principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
$settings = New-ScheduledTaskSettingsSet -ExecutionTimeLimit ([TimeSpan]::Zero) -RestartCount 999 -RestartInterval (New-TimeSpan -Minutes 1)
Register-ScheduledTask -TaskName ${q(BOOT_TASK)} -Action $action -Trigger $trigger -Principal $principal -Settings $settings -Force | Out-Null
# The boot task starts the kubelet once the node is ready for it.
Set-Service -Name 'kubelet' -StartupType Manual
Set-KubemixRestart -Name 'kubelet' -Enabled $true
`;
  const check = checkThat(
    `($null -ne (Get-ScheduledTask -TaskName ${q(BOOT_TASK)} -ErrorAction SilentlyContinue)) -and (Get-ScheduledTask -TaskName ${q(BOOT_TASK)}).Settings.ExecutionTimeLimit -eq 'PT0S' -and (Get-Service -Name 'kubelet').StartType -eq 'Manual'`,
  );
  return { check, apply };
}
