// After a reboot: boot.ps1, run by a scheduled task at startup, walks the
// decision table of boot-rules.ts until every service is up. It has no
// deadline: waits back off to a minute and go on until the API answers; an
// error is logged and retried the same way. The services themselves restart
// on failure (SCM failure actions; WinSW's onfailure for flanneld), so the
// script only has to get the start order right once per boot.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { BOOT_BACKOFF, BOOT_FACTS, bootRules, type BootAction, type BootFact, type BootRule } from './boot-rules.js';
import { EXTERNAL_NETWORK, hnsNetworkName } from './network.js';
import { WIN } from './paths.js';
import { createExternalNetwork } from './prepare.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from './ps.js';
import { CALICO_ENDPOINT_FUNCTION, CALICO_SOURCE_VIP_REFRESH } from './calico.js';
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
function factExpressions(model: ClusterModel): Record<BootFact, string> {
  const network = hnsNetworkName(model.overlay);
  // Calico: its network and the host endpoint kube-proxy takes its source VIP from.
  const calicoReady = `($null -ne (Get-KubemixHnsNetwork -Name ${q(network)})) -and ($null -ne (Get-KubemixCalicoEndpoint))`;
  return {
    RuntimeRunning: "(Test-KubemixRunning 'containerd')",
    ExternalNetwork: `($null -ne (Get-KubemixHnsNetwork -Name ${q(EXTERNAL_NETWORK.name)}))`,
    SubnetEnvStale: '$stale',
    ApiAnswers: '(Test-KubemixApi)',
    FlanneldRunning: "(Test-KubemixRunning 'flanneld')",
    NetworkReady:
      model.overlay.plugin === 'calico'
        ? calicoReady
        : `($null -ne $subnet) -and (-not $stale) -and ($null -ne (Get-KubemixHnsNetwork -Name ${q(network)}))`,
    KubeletRunning: "(Test-KubemixRunning 'kubelet')",
    KubeProxyRunning: "(Test-KubemixRunning 'kube-proxy')",
  };
}

/** Get-KubemixBootFacts observes only the facts the table reads. */
function factsFunction(model: ClusterModel, rules: readonly BootRule[]): string {
  const api = model.cluster.apiEndpoint;
  const used = BOOT_FACTS.filter((f) => rules.some((r) => f in r.when));
  const expr = factExpressions(model);
  // Any HTTP status means the API server answers (TLS checked against the cluster CA); 000 means it does not.
  return `function Test-KubemixRunning([string]$Name) {
  $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
  return ($null -ne $svc -and $svc.Status -eq 'Running')
}
${
  used.includes('ApiAnswers')
    ? `function Test-KubemixApi {
  $code = & (Join-Path $env:SystemRoot 'System32\\curl.exe') --silent --ssl-no-revoke --noproxy '*' --max-time 10 --cacert ${q(WIN.caCert)} --output NUL --write-out '%{http_code}' ${q(`https://${api.host}:${api.port}/readyz`)}
  return ($code -match '^[1-5][0-9][0-9]$')
}
`
    : ''
}function Get-KubemixBootFacts {
  $boot = (Get-CimInstance -ClassName Win32_OperatingSystem).LastBootUpTime
  $subnet = Get-Item -LiteralPath ${q(WIN.subnetEnv)} -ErrorAction SilentlyContinue
  $stale = ($null -ne $subnet) -and ($subnet.LastWriteTime -lt $boot)
  return [pscustomobject]@{
${used.map((f) => `    ${f} = ${expr[f]}`).join('\n')}
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
    case 'start-flanneld':
      return "Start-Service -Name 'flanneld'";
    case 'start-kubelet':
      return "Start-Service -Name 'kubelet'";
    case 'start-kube-proxy':
      return model.overlay.plugin === 'calico'
        ? `${CALICO_SOURCE_VIP_REFRESH}Start-Service -Name 'kube-proxy'`
        : "Start-Service -Name 'kube-proxy'";
    case 'wait-api':
    case 'wait-network':
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

export function bootScript(model: ClusterModel, node: PlanNode, hostProcess = false): string {
  const rules = bootRules(hostProcess, model.overlay.plugin);
  return `$ErrorActionPreference = 'Stop'
Start-Transcript -Path ${q(`${WIN.logs}\\kubemix-boot.log`)} -Append | Out-Null
${HNS_FUNCTIONS}${model.overlay.plugin === 'calico' ? CALICO_ENDPOINT_FUNCTION : ''}${factsFunction(model, rules)}${bootActionFunction(rules)}${actionFunction(rules, model, node)}$delay = ${BOOT_BACKOFF.firstSeconds}
while ($true) {
  try {
    $facts = Get-KubemixBootFacts
    $action = Get-KubemixBootAction $facts
    Write-Output ((Get-Date -Format 'o') + ' ' + $action)
    if ($action -eq 'done') { break }
    Invoke-KubemixBootAction -Action $action
    if ($action -notlike 'wait-*') { $delay = ${BOOT_BACKOFF.firstSeconds}; continue }
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
 * The services the boot script starts stay Manual (automatic start would race
 * flanneld), restart on failure without a limit (the SCM repeats the last
 * failure action for every later failure: MS-SCMR SERVICE_FAILURE_ACTIONS), and the scheduled task runs without a time limit and is restarted
 * by the Task Scheduler if it dies.
 */
export function bootOrder(hostProcess = false, calico = false): WindowsScripts {
  const manual = calico ? ['kubelet', 'kube-proxy'] : hostProcess ? ['kubelet'] : ['kubelet', 'kube-proxy', 'flanneld'];
  const apply = `${SERVICE_FUNCTIONS}$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ${q(`-NoProfile -ExecutionPolicy Bypass -File "${WIN.bootScript}"`)}
$trigger = New-ScheduledTaskTrigger -AtStartup
$principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
$settings = New-ScheduledTaskSettingsSet -ExecutionTimeLimit ([TimeSpan]::Zero) -RestartCount 999 -RestartInterval (New-TimeSpan -Minutes 1)
Register-ScheduledTask -TaskName ${q(BOOT_TASK)} -Action $action -Trigger $trigger -Principal $principal -Settings $settings -Force | Out-Null
# The boot task starts these in order; automatic start would race ${calico ? "calico-node-windows' network rebuild" : 'flanneld'}.
foreach ($name in ${manual.map(q).join(', ')}) {
  Set-Service -Name $name -StartupType Manual
  Set-KubemixRestart -Name $name -Enabled $true
}
`;
  const check = checkThat(
    `($null -ne (Get-ScheduledTask -TaskName ${q(BOOT_TASK)} -ErrorAction SilentlyContinue)) -and (Get-ScheduledTask -TaskName ${q(BOOT_TASK)}).Settings.ExecutionTimeLimit -eq 'PT0S' -and (Get-Service -Name 'kubelet').StartType -eq 'Manual'`,
  );
  return { check, apply };
}
