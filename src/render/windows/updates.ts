// Windows updates through the Windows Update Agent API (the
// Microsoft.Update.Session COM object, learn.microsoft.com "Searching,
// Downloading, and Installing Updates"), so no PowerShell module is
// downloaded. Every WUA call runs as SYSTEM in a one-shot scheduled task
// (system-task.ts): the API refuses download, install and EULA to a remote
// caller, which an SSH session is, and Windows Server 2025 refuses even the
// search [S]. Three steps, each its own task so a failure is found before
// the node is cordoned where it can be: the query (what is pending), the
// stage (search, EULAs, download — before the cordon), the install (from
// what was staged, after the drain). Pure: the selection in, PowerShell out.
import { CALICO_WINDOWS } from '../../matrix/index.js';
import { CALICO_ENDPOINT_FUNCTION, CALICO_READY } from './calico.js';
import { hnsNetworkName } from './network.js';
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { HNS_FUNCTIONS, q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';
import { SYSTEM_TASK_FUNCTION, runAsSystem } from './system-task.js';

export interface UpdateSelection {
  /** Only these KB articles (`KB5040437`); empty: every pending update. */
  readonly kbs: readonly string[];
  /** Only updates in the Security Updates category. */
  readonly securityOnly: boolean;
}

/** Where a patch run keeps its state on the node. */
export const PATCH_DIR = `${WIN.kubemix}\\patch`;
/** The KBs installed by the last patch run, one per line: what a rollback names. */
export const PATCH_RECORD = `${WIN.kubemix}\\patch-installed.txt`;
/** What the stage step downloaded: its id (a new one per stage), update ids, KBs and titles. */
export const PATCH_STAGED = `${PATCH_DIR}\\staged.json`;
/** Written by the install right before WUA's Install(): this staging's install has begun. */
export const PATCH_BEGUN = `${PATCH_DIR}\\install-begun.txt`;
/** The install's outcome for a staging: result code, KBs installed and failed, reboot required. */
export const PATCH_RESULT = `${PATCH_DIR}\\installed.json`;

/**
 * The start of a failure message that means no update was installed on the
 * node: kubemix patch (src/patch/run.ts) then uncordons it instead of leaving
 * it cordoned with nothing to show for it.
 */
export const NOTHING_INSTALLED = 'kubemix-patch: nothing was installed:';

/** Seconds each SYSTEM task may take (the SSH session waits this long; the task's own limit is twice it). */
export const SYSTEM_TASK_SECONDS = { query: 540, stage: 3300, install: 5400 } as const;

const REBOOT_KEYS = [
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Component Based Servicing\\RebootPending',
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\WindowsUpdate\\Auto Update\\RebootRequired',
];

/** PowerShell condition: Windows waits for a reboot (registry only, which an SSH session may read). */
export const REBOOT_PENDING = `(@(${qList(REBOOT_KEYS)} | Where-Object { Test-Path -LiteralPath $_ }).Count -gt 0)`;

/** The search, in the SYSTEM task: the pending software updates the selection names, as an UpdateColl. */
function searchWorker(selection: UpdateSelection): string {
  return `function Get-KubemixPendingUpdates($Session) {
  $wanted = ${qList(selection.kbs)}
  $found = $Session.CreateUpdateSearcher().Search("IsInstalled=0 and IsHidden=0 and Type='Software'")
  $picked = New-Object -ComObject 'Microsoft.Update.UpdateColl'
  foreach ($update in $found.Updates) {
    $kbs = @($update.KBArticleIDs | ForEach-Object { "KB$_" })
    $security = @($update.Categories | Where-Object { $_.Name -eq 'Security Updates' }).Count -gt 0
    if (${selection.securityOnly ? '$true' : '$false'} -and -not $security) { continue }
    if ($wanted.Count -gt 0 -and @($kbs | Where-Object { $wanted -contains $_ }).Count -eq 0) { continue }
    [void]$picked.Add($update)
  }
  return ,$picked
}
$session = New-Object -ComObject 'Microsoft.Update.Session'
Write-KubemixProgress 'searching Windows Update'
$updates = Get-KubemixPendingUpdates -Session $session
Write-KubemixProgress ('found ' + $updates.Count + ' pending update(s)')
`;
}

/**
 * The patch query (`kubemix patch` runs it first on every node, and
 * `--check` prints it): one `pending<TAB>KBs<TAB>title` line per pending
 * update the selection names, and `reboot-required` when Windows waits for a
 * reboot. Installs nothing.
 */
export function listPendingUpdates(selection: UpdateSelection): string {
  const worker = `${searchWorker(selection)}$lines = @(foreach ($update in $updates) {
  $kbs = @($update.KBArticleIDs | ForEach-Object { "KB$_" }) -join ','
  "pending\`t" + $kbs + "\`t" + $update.Title
})
Set-Content -LiteralPath $KubemixResult -Value $lines
`;
  return `${SYSTEM_TASK_FUNCTION}${runAsSystem('found', 'kubemix-patch-query', worker, { timeoutSeconds: SYSTEM_TASK_SECONDS.query, stopOnTimeout: true })}foreach ($line in $found) { Write-Output $line }
if ${REBOOT_PENDING} { Write-Output 'reboot-required' }
`;
}

/**
 * Before the cordon: search, accept EULAs and download what the selection
 * names, and record it (a new staging id each time) for the install. A node
 * whose SYSTEM task cannot start or whose download fails is never cordoned.
 */
export function stageUpdates(selection: UpdateSelection): WindowsScripts {
  const worker = `${searchWorker(selection)}$missing = New-Object -ComObject 'Microsoft.Update.UpdateColl'
foreach ($update in $updates) {
  if (-not $update.EulaAccepted) { $update.AcceptEula() }
  if (-not $update.IsDownloaded) { [void]$missing.Add($update) }
}
if ($missing.Count -gt 0) {
  Write-KubemixProgress ('downloading ' + $missing.Count + ' update(s)')
  $downloader = $session.CreateUpdateDownloader()
  $downloader.Updates = $missing
  $download = $downloader.Download()
  Write-KubemixProgress ('download result code ' + $download.ResultCode)
  # OperationResultCode 2: succeeded; 3: succeeded with errors.
  if (@(2, 3) -notcontains $download.ResultCode) { throw "the download finished with result code $($download.ResultCode)" }
}
$staged = [ordered]@{
  staging = [guid]::NewGuid().ToString()
  ids = @(foreach ($update in $updates) { $update.Identity.UpdateID })
  kbs = @(foreach ($update in $updates) { $update.KBArticleIDs | ForEach-Object { "KB$_" } })
  titles = @(foreach ($update in $updates) { $update.Title })
}
New-Item -ItemType Directory -Force -Path ${q(PATCH_DIR)} | Out-Null
Set-Content -LiteralPath ${q(PATCH_STAGED)} -Value ($staged | ConvertTo-Json)
Set-Content -LiteralPath $KubemixResult -Value ('staged ' + $updates.Count + ' update(s): ' + ($staged.kbs -join ' '))
`;
  const apply = `${SYSTEM_TASK_FUNCTION}${runAsSystem('staged', 'kubemix-patch-stage', worker, { timeoutSeconds: SYSTEM_TASK_SECONDS.stage, stopOnTimeout: true })}foreach ($line in $staged) { Write-Output $line }
`;
  return { check: null, apply };
}

/** Before the install: a reboot Windows already waits for comes first (WUA may refuse to install until then). */
export function rebootIfPending(): WindowsScripts {
  return {
    check: checkThat(`-not ${REBOOT_PENDING}`),
    apply: `& shutdown.exe /r /t 10 /c 'kubemix patch: a reboot was pending before installing updates'
if ($LASTEXITCODE -ne 0) { throw "shutdown.exe exited $LASTEXITCODE" }
`,
  };
}

/** The install, in the SYSTEM task: what the stage recorded (found again by update id), downloaded if it went. */
const INSTALL_WORKER = `$staged = Get-Content -Raw -LiteralPath ${q(PATCH_STAGED)} | ConvertFrom-Json
$session = New-Object -ComObject 'Microsoft.Update.Session'
Write-KubemixProgress 'searching Windows Update for the staged updates'
$found = $session.CreateUpdateSearcher().Search("IsInstalled=0 and Type='Software'")
$todo = New-Object -ComObject 'Microsoft.Update.UpdateColl'
$missing = New-Object -ComObject 'Microsoft.Update.UpdateColl'
foreach ($update in $found.Updates) {
  if (@($staged.ids) -notcontains $update.Identity.UpdateID) { continue }
  if (-not $update.EulaAccepted) { $update.AcceptEula() }
  if (-not $update.IsDownloaded) { [void]$missing.Add($update) }
  [void]$todo.Add($update)
}
$result = [ordered]@{ staging = $staged.staging; resultCode = 0; rebootRequired = $false; installed = @(); failed = @() }
if ($todo.Count -gt 0) {
  if ($missing.Count -gt 0) {
    Write-KubemixProgress ('downloading ' + $missing.Count + ' update(s) again')
    $downloader = $session.CreateUpdateDownloader()
    $downloader.Updates = $missing
    [void]$downloader.Download()
  }
  Set-Content -LiteralPath ${q(PATCH_BEGUN)} -Value $staged.staging
  Write-KubemixProgress ('installing ' + $todo.Count + ' update(s)')
  $installer = $session.CreateUpdateInstaller()
  $installer.Updates = $todo
  $outcome = $installer.Install()
  for ($i = 0; $i -lt $todo.Count; $i++) {
    $kbs = @($todo.Item($i).KBArticleIDs | ForEach-Object { "KB$_" })
    $code = $outcome.GetUpdateResult($i).ResultCode
    # OperationResultCode 2: succeeded; 3: succeeded with errors.
    if (@(2, 3) -contains $code) { $result.installed += $kbs } else { $result.failed += @($kbs | ForEach-Object { "$_ (result code $code)" }) }
  }
  $result.resultCode = $outcome.ResultCode
  $result.rebootRequired = [bool]$outcome.RebootRequired
  Write-KubemixProgress ('install result code ' + $outcome.ResultCode + ', reboot required: ' + $outcome.RebootRequired)
}
Set-Content -LiteralPath ${q(PATCH_RECORD)} -Value $result.installed
Set-Content -LiteralPath ${q(PATCH_RESULT)} -Value ($result | ConvertTo-Json)
Set-Content -LiteralPath $KubemixResult -Value ('installed: ' + ($result.installed -join ' '))
`;

/** Check condition: the install of the current staging finished (its result recorded) and no reboot is pending. */
const INSTALLED_AND_REBOOTED = `(Test-Path -LiteralPath ${q(PATCH_STAGED)}) -and (Test-Path -LiteralPath ${q(PATCH_RESULT)}) -and ((Get-Content -Raw -LiteralPath ${q(PATCH_RESULT)} | ConvertFrom-Json).staging -eq (Get-Content -Raw -LiteralPath ${q(PATCH_STAGED)} | ConvertFrom-Json).staging) -and -not ${REBOOT_PENDING}`;

/**
 * After the drain: install what the stage recorded, as SYSTEM, then reboot
 * when Windows asks (shutdown.exe delayed so this session returns first).
 * A re-run after the install finished only reboots, if that is still due.
 * When it fails before WUA's Install() began, the message starts with
 * NOTHING_INSTALLED: the node is uncordoned (src/patch/run.ts). A task still
 * installing at the bound is left to finish and the node stays cordoned.
 */
export function installUpdates(): WindowsScripts {
  const staging = `(Get-Content -Raw -LiteralPath ${q(PATCH_STAGED)} | ConvertFrom-Json).staging`;
  // Its own last line on stderr, where the executor's error keeps it (the step's last output lines).
  const nothing = `function Stop-KubemixNothingInstalled([string]$Why) {
  [Console]::Error.WriteLine(${q(NOTHING_INSTALLED)} + ' ' + $Why)
  exit 1
}
`;
  const apply = `${SYSTEM_TASK_FUNCTION}${nothing}if (-not (Test-Path -LiteralPath ${q(PATCH_STAGED)})) { Stop-KubemixNothingInstalled ${q(`${PATCH_STAGED} is missing: the stage step did not run on this node`)} }
$staging = ${staging}
$done = (Test-Path -LiteralPath ${q(PATCH_RESULT)}) -and ((Get-Content -Raw -LiteralPath ${q(PATCH_RESULT)} | ConvertFrom-Json).staging -eq $staging)
if (-not $done) {
  try {
    ${runAsSystem('installed', 'kubemix-patch-install', INSTALL_WORKER, {
      timeoutSeconds: SYSTEM_TASK_SECONDS.install,
      stopOnTimeout: false,
    })
      .trimEnd()
      .replace(/\n(?!'@)/g, '\n    ')}
    foreach ($line in $installed) { Write-Output $line }
  } catch {
    $begun = (Test-Path -LiteralPath ${q(PATCH_BEGUN)}) -and (([string](Get-Content -Raw -LiteralPath ${q(PATCH_BEGUN)})).Trim() -eq $staging)
    if (-not $begun -and $_.Exception.Message -notlike '*still running*') { Stop-KubemixNothingInstalled $_.Exception.Message }
    throw
  }
}
$result = Get-Content -Raw -LiteralPath ${q(PATCH_RESULT)} | ConvertFrom-Json
if (@($result.failed).Count -gt 0) { Write-Output ('failed: ' + (@($result.failed) -join ', ')) }
if (@($result.installed).Count -eq 0 -and @($result.failed).Count -gt 0) { Stop-KubemixNothingInstalled ('every staged update failed: ' + (@($result.failed) -join ', ')) }
if (@(0, 2, 3) -notcontains [int]$result.resultCode) { throw "Windows Update finished with result code $($result.resultCode)" }
if ([bool]$result.rebootRequired -or ${REBOOT_PENDING}) {
  & shutdown.exe /r /t 10 /c 'kubemix patch: finishing Windows updates'
  if ($LASTEXITCODE -ne 0) { throw "shutdown.exe exited $LASTEXITCODE" }
}
`;
  return { check: checkThat(INSTALLED_AND_REBOOTED), apply };
}

/** What "the pod network is back" means on the node, and what to name when it is not. */
function networkHealth(model: ClusterModel): { functions: string; healthy: string; missing: string } {
  const network = hnsNetworkName(model.overlay);
  const present = `$null -ne (Get-KubemixHnsNetwork -Name ${q(network)})`;
  // calico-node-windows (a pod the kubelet runs) rebuilds Calico's network and endpoint after every boot.
  if (model.overlay.plugin === 'calico')
    return {
      functions: `${HNS_FUNCTIONS}${CALICO_ENDPOINT_FUNCTION}`,
      healthy: CALICO_READY,
      missing: `calico-node-windows has not rebuilt the HNS network ${network}, its endpoint ${CALICO_WINDOWS.hostEndpoint} or ${CALICO_WINDOWS.cniConfName}`,
    };
  // HostProcess flannel is a pod too: no flanneld service to look for.
  if (model.windowsHostProcess !== undefined)
    return { functions: HNS_FUNCTIONS, healthy: present, missing: `the HNS network ${network} is missing` };
  return {
    functions: HNS_FUNCTIONS,
    healthy: `(Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue).Status -eq 'Running' -and ${present}`,
    missing: `flanneld or the HNS network ${network} is missing`,
  };
}

/**
 * After the reboot and Ready: the pod network is back (flanneld Running and
 * its HNS network present; with Calico, Calico's network, endpoint and CNI
 * config), within five minutes; else it fails naming the updates installed
 * and the wusa command that removes each.
 */
export function podNetworkBack(model: ClusterModel): WindowsScripts {
  const { functions, healthy, missing } = networkHealth(model);
  return {
    check: `${functions}${checkThat(healthy)}`,
    apply: `${functions}$deadline = (Get-Date).AddMinutes(5)
while ((Get-Date) -lt $deadline) {
  if (${healthy}) { exit 0 }
  Start-Sleep -Seconds 10
}
$kbs = @(if (Test-Path -LiteralPath ${q(PATCH_RECORD)}) { Get-Content -LiteralPath ${q(PATCH_RECORD)} })
$undo = @($kbs | ForEach-Object { "wusa /uninstall /kb:$($_ -replace '^KB', '') /quiet /norestart" }) -join '; '
throw ("the pod network did not come back: ${missing}. Installed: " + ($kbs -join ' ') + ". The node stays cordoned; to roll back run: " + $undo + ', then reboot')
`,
  };
}
