// Reset a Windows worker to its state before kubemix: services, HNS
// networks and endpoints, CNI state, flannel's lease file, kubelet state and
// certificates. The Node object is deleted from the control plane.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { hnsNetworkName } from './network.js';
import { CONTAINERD_PIPE, WIN } from './paths.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q, qList } from './ps.js';
import { BOOT_TASK } from './host.js';
import { TOKEN_RENEW_TASK } from './token.js';
import { shellQuote } from '../../util/escape/index.js';

export function resetScript(model: ClusterModel): string {
  const removed = [
    `${WIN.cniState}\\${hnsNetworkName(model.cluster.cni)}`,
    WIN.subnetEnv,
    WIN.cniConf,
    WIN.sourceVipFile,
    WIN.kubeProxyConfig,
    WIN.kubeProxyKubeconfig,
    WIN.kubeProxyToken,
    WIN.kubeletDir,
    WIN.kubernetesDir,
    WIN.joinConfig,
  ];
  return `$ErrorActionPreference = 'Stop'
${SERVICE_FUNCTIONS}${HNS_FUNCTIONS}foreach ($task in ${q(BOOT_TASK)}, ${q(TOKEN_RENEW_TASK)}) {
  if ($null -ne (Get-ScheduledTask -TaskName $task -ErrorAction SilentlyContinue)) {
    Unregister-ScheduledTask -TaskName $task -Confirm:$false
  }
}
foreach ($name in 'kube-proxy', 'flanneld', 'kubelet') {
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
if ($null -ne (Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue)) {
  & ${q(`${WIN.flanneldDir}\\flanneld-service.exe`)} uninstall
  if ($LASTEXITCODE -ne 0) { throw "WinSW could not uninstall flanneld (exit $LASTEXITCODE)" }
}
foreach ($name in 'kube-proxy', 'kubelet') {
  if ($null -ne (Get-Service -Name $name -ErrorAction SilentlyContinue)) {
    & sc.exe delete $name | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "sc.exe delete $name exited $LASTEXITCODE" }
  }
}
foreach ($e in @(Invoke-KubemixHns -Method 'GET' -Path '/endpoints/')) {
  Invoke-KubemixHns -Method 'DELETE' -Path "/endpoints/$($e.ID)" | Out-Null
}
# Windows' own nat network stays; ours (External, flannel's) go.
foreach ($n in @(Invoke-KubemixHns -Method 'GET' -Path '/networks/')) {
  if ($n.Name -ne 'nat') { Invoke-KubemixHns -Method 'DELETE' -Path "/networks/$($n.ID)" | Out-Null }
}
foreach ($path in ${qList(removed)}) {
  if (Test-Path -LiteralPath $path) { Remove-Item -Recurse -Force -LiteralPath $path }
}
`;
}

/** Deletes the Node object through the first control-plane node's admin kubeconfig. */
export function deleteNodeScript(node: PlanNode): string {
  return `kubectl --kubeconfig /etc/kubernetes/admin.conf delete node ${shellQuote(node.name.toLowerCase())} --ignore-not-found\n`;
}
