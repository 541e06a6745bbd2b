// Reset a Windows worker to its state before kubemix: the kubelet (kubeadm
// reset removes its pods, flanneld's and kube-proxy's among them, through the
// CRI) and the services earlier kubemix versions ran, the HNS
// networks kubemix and flannel made (by name: External and flannel's) and
// their endpoints, CNI state, flannel's lease file, kubelet state and
// certificates, the hosts-file block; with Calico, calico-node-windows' networks
// (External and Calico), CNI files and registry key, after kubeadm reset has
// removed its pod through the CRI. Networks kubemix did not make (Docker's
// nat, an admin's external switch) stay. The Node object is deleted from the
// control plane.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { HOSTS_BEGIN, HOSTS_END, WINDOWS_HOSTS_FILE } from './hosts.js';
import { EXTERNAL_NETWORK, hnsNetworkName } from './network.js';
import { CONTAINERD_PIPE, WIN } from './paths.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q, qList, withoutUnusedHelpers } from './ps.js';
import { BOOT_TASK } from './boot.js';
import { CALICO_RESET_PATHS, CALICO_RESET_REGISTRY } from './calico.js';
import { LEGACY_FILES, LEGACY_RENEW_TASK } from './retire.js';
import { shell, type ShellText } from '../../util/escape/index.js';

/**
 * The HNS networks kubemix (External) and flanneld (its backend's network) create
 * on a node; with Calico, calico-node-windows' own External and Calico.
 */
export function ownedNetworks(model: ClusterModel): string[] {
  return [EXTERNAL_NETWORK.name, hnsNetworkName(model.overlay)];
}

/**
 * Deletes a tree without following links: the kubelet's directory holds
 * symlinks and mount points into the host (the pki link, hostPath and CSI
 * volumes), and a recursive Remove-Item in Windows PowerShell 5.1 deletes
 * what a directory link points at. A link is removed as a link.
 */
export const REMOVE_TREE_FUNCTION = `function Remove-KubemixTree([string]$Path) {
  $item = Get-Item -LiteralPath $Path -Force -ErrorAction SilentlyContinue
  if ($null -eq $item) { return }
  if (($item.Attributes -band [IO.FileAttributes]::ReparsePoint) -ne 0) {
    if ($item.PSIsContainer) { [IO.Directory]::Delete($item.FullName, $false) } else { [IO.File]::Delete($item.FullName) }
    return
  }
  if ($item.PSIsContainer) {
    foreach ($child in @(Get-ChildItem -LiteralPath $item.FullName -Force)) { Remove-KubemixTree -Path $child.FullName }
  }
  Remove-Item -Force -LiteralPath $item.FullName
}
`;

const WINSW_UNINSTALL = `if ($null -ne (Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue)) {
  & ${q(`${WIN.flanneldDir}\\flanneld-service.exe`)} uninstall
  if ($LASTEXITCODE -ne 0) { throw "WinSW could not uninstall flanneld (exit $LASTEXITCODE)" }
}
`;

export function resetScript(model: ClusterModel): string {
  const calico = model.overlay.plugin === 'calico';
  const flannel = calico ? [] : [`${WIN.cniState}\\${hnsNetworkName(model.overlay)}`, WIN.subnetEnv, WIN.cniConf];
  const removed = [
    ...flannel,
    WIN.sourceVipFile,
    WIN.kubeProxyConfig,
    WIN.kubeProxyConfigTemplate,
    WIN.kubeProxyLauncher,
    ...(calico ? [] : [WIN.flanneldLauncher, WIN.flannelNetConf]),
    ...(calico ? LEGACY_FILES.filter((f) => !f.includes('flanneld')) : LEGACY_FILES),
    WIN.kubeletDir,
    WIN.kubernetesDir,
    WIN.joinConfig,
    ...(calico ? CALICO_RESET_PATHS : []),
  ];
  // kube-proxy and flanneld: the services of earlier kubemix versions, if a node still has them.
  const services = calico ? ['kube-proxy', 'kubelet'] : ['kube-proxy', 'flanneld', 'kubelet'];
  return withoutUnusedHelpers(`$ErrorActionPreference = 'Stop'
${SERVICE_FUNCTIONS}${HNS_FUNCTIONS}foreach ($task in ${q(BOOT_TASK)}, ${q(LEGACY_RENEW_TASK)}) {
  if ($null -ne (Get-ScheduledTask -TaskName $task -ErrorAction SilentlyContinue)) {
    Unregister-ScheduledTask -TaskName $task -Confirm:$false
  }
}
foreach ($name in ${services.map(q).join(', ')}) {
  if ($null -ne (Get-Service -Name $name -ErrorAction SilentlyContinue)) {
    # Restart-on-failure would bring a service back while we tear it down.
    Set-KubemixRestart -Name $name -Enabled $false
    Stop-KubemixService -Name $name
  }
}
if (Test-Path -LiteralPath ${q(`${WIN.bin}\\kubeadm.exe`)}) {
  & ${q(`${WIN.bin}\\kubeadm.exe`)} reset --force --cri-socket ${q(CONTAINERD_PIPE)}
  if ($LASTEXITCODE -ne 0) { Write-Warning "kubeadm reset exited $LASTEXITCODE; removing its files by hand" }
}
${calico ? '' : WINSW_UNINSTALL}foreach ($name in 'kube-proxy', 'kubelet') {
  if ($null -ne (Get-Service -Name $name -ErrorAction SilentlyContinue)) {
    & sc.exe delete $name | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "sc.exe delete $name exited $LASTEXITCODE" }
  }
}
# Only the networks kubemix and ${calico ? 'calico-node-windows' : 'flanneld'} made, by name, and the endpoints on them.
$owned = @(Invoke-KubemixHns -Method 'GET' -Path '/networks/') | Where-Object { ${qList(ownedNetworks(model))} -contains $_.Name }
$ownedIds = @($owned | ForEach-Object { $_.ID })
foreach ($e in @(Invoke-KubemixHns -Method 'GET' -Path '/endpoints/')) {
  if ($ownedIds -contains $e.VirtualNetwork) { Invoke-KubemixHns -Method 'DELETE' -Path "/endpoints/$($e.ID)" | Out-Null }
}
foreach ($n in $owned) { Invoke-KubemixHns -Method 'DELETE' -Path "/networks/$($n.ID)" | Out-Null }
${REMOVE_TREE_FUNCTION}foreach ($path in ${qList(removed)}) { Remove-KubemixTree -Path $path }
${calico ? CALICO_RESET_REGISTRY : ''}# kubemix's block in the hosts file; every other line stays.
$lines = @(Get-Content -LiteralPath ${q(WINDOWS_HOSTS_FILE)} -ErrorAction SilentlyContinue)
$begin = [Array]::IndexOf($lines, ${q(HOSTS_BEGIN)})
$end = [Array]::IndexOf($lines, ${q(HOSTS_END)})
if ($begin -ge 0 -and $end -gt $begin) {
  $kept = New-Object System.Collections.Generic.List[string]
  for ($i = 0; $i -lt $lines.Count; $i++) { if ($i -lt $begin -or $i -gt $end) { $kept.Add($lines[$i]) } }
  Set-Content -LiteralPath ${q(WINDOWS_HOSTS_FILE)} -Value $kept -Encoding ASCII
}
`);
}

/** Deletes the Node object through the first control-plane node's admin kubeconfig. */
export function deleteNodeScript(node: PlanNode): ShellText {
  return shell`kubectl --kubeconfig /etc/kubernetes/admin.conf delete node ${node.name.toLowerCase()} --ignore-not-found\n`;
}
