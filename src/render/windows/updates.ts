// Windows updates through the Windows Update Agent API (the
// Microsoft.Update.Session COM object, learn.microsoft.com "Searching,
// Downloading, and Installing Updates"), so no PowerShell module is
// downloaded. Pure: the selection in, PowerShell text out.
import { CALICO_WINDOWS } from '../../matrix/index.js';
import { CALICO_ENDPOINT_FUNCTION, CALICO_READY } from './calico.js';
import { hnsNetworkName } from './network.js';
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { HNS_FUNCTIONS, q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export interface UpdateSelection {
  /** Only these KB articles (`KB5040437`); empty: every pending update. */
  readonly kbs: readonly string[];
  /** Only updates in the Security Updates category. */
  readonly securityOnly: boolean;
}

/** The KBs installed by the last patch run, one per line: what a rollback names. */
export const PATCH_RECORD = `${WIN.kubemix}\\patch-installed.txt`;

const REBOOT_KEYS = [
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Component Based Servicing\\RebootPending',
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\WindowsUpdate\\Auto Update\\RebootRequired',
];

/** Defines Get-KubemixPendingUpdates: the pending software updates the selection names, as an UpdateColl. */
function searchFunction(selection: UpdateSelection): string {
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
`;
}

/**
 * The patch query (`kubemix patch` runs it first on every node, and
 * `--check` prints it): one `pending<TAB>KBs<TAB>title` line per pending
 * update the selection names, and `reboot-required` when Windows waits for a
 * reboot. Installs nothing.
 */
export function listPendingUpdates(selection: UpdateSelection): string {
  return `${searchFunction(selection)}$session = New-Object -ComObject 'Microsoft.Update.Session'
foreach ($update in (Get-KubemixPendingUpdates -Session $session)) {
  $kbs = @($update.KBArticleIDs | ForEach-Object { "KB$_" }) -join ','
  Write-Output ("pending\`t" + $kbs + "\`t" + $update.Title)
}
if (@(${qList(REBOOT_KEYS)} | Where-Object { Test-Path -LiteralPath $_ }).Count -gt 0) { Write-Output 'reboot-required' }
`;
}

/**
 * Check: nothing the selection names is pending and no reboot is pending
 * (it fails until the reboot is over). Apply: download and install, record
 * the KBs, reboot when Windows asks for it (shutdown.exe delayed so this
 * session returns first).
 */
export function installUpdates(selection: UpdateSelection): WindowsScripts {
  const pending = `@(${qList(REBOOT_KEYS)} | Where-Object { Test-Path -LiteralPath $_ }).Count -eq 0`;
  const check = `${searchFunction(selection)}$session = New-Object -ComObject 'Microsoft.Update.Session'
${checkThat(`(Get-KubemixPendingUpdates -Session $session).Count -eq 0 -and ${pending}`)}`;
  const apply = `${searchFunction(selection)}$session = New-Object -ComObject 'Microsoft.Update.Session'
$updates = Get-KubemixPendingUpdates -Session $session
if ($updates.Count -eq 0) { Write-Output 'no pending update matches'; exit 0 }
foreach ($update in $updates) { if (-not $update.EulaAccepted) { $update.AcceptEula() } }
$downloader = $session.CreateUpdateDownloader()
$downloader.Updates = $updates
[void]$downloader.Download()
$installer = $session.CreateUpdateInstaller()
$installer.Updates = $updates
$result = $installer.Install()
$installed = @(for ($i = 0; $i -lt $updates.Count; $i++) {
  # ResultCode 2: succeeded; 3: succeeded with errors.
  if (@(2, 3) -contains $result.GetUpdateResult($i).ResultCode) { $updates.Item($i).KBArticleIDs | ForEach-Object { "KB$_" } }
})
New-Item -ItemType Directory -Force -Path ${q(WIN.kubemix)} | Out-Null
Set-Content -LiteralPath ${q(PATCH_RECORD)} -Value $installed
Write-Output ("installed: " + ($installed -join ' '))
if (@(2, 3) -notcontains $result.ResultCode) { throw "Windows Update finished with result code $($result.ResultCode)" }
if ($result.RebootRequired) {
  & shutdown.exe /r /t 10 /c 'kubemix patch: finishing Windows updates'
  if ($LASTEXITCODE -ne 0) { throw "shutdown.exe exited $LASTEXITCODE" }
}
`;
  return { check, apply };
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
