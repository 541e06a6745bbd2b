// Steps 8–9 of a Windows worker: kubeadm join, then the wait for the network
// the flanneld HostProcess pod creates.
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { registeredName } from './kubeadm.js';
import { hnsNetworkName } from './network.js';
import { CONTAINERD_PIPE, WIN } from './paths.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export const JOIN_SECRETS = [SECRET_NAMES.clusterCaCertHash, SECRET_NAMES.kubeadmToken] as const;

/**
 * Flags kubeadm may write to kubeadm-flags.env that lose nothing on Windows:
 * the same value is on the service command line, in the config patch, or (the
 * sandbox image) pinned in containerd. Names without dashes.
 */
function allowedFlags(node: PlanNode): string {
  return `@{
  'hostname-override' = ${q(registeredName(node))}
  'node-ip' = ${q(node.ip)}
  'container-runtime-endpoint' = ${q(CONTAINERD_PIPE)}
  'pod-infra-container-image' = '*'
}`;
}

/** Fails when kubeadm-flags.env holds a flag nothing on Windows would apply. */
function flagsEnvCheck(node: PlanNode): string {
  return `$allowed = ${allowedFlags(node)}
if (Test-Path -LiteralPath ${q(WIN.kubeadmFlags)}) {
  $text = Get-Content -Raw -LiteralPath ${q(WIN.kubeadmFlags)}
  $lost = @()
  if ($text -match 'KUBELET_KUBEADM_ARGS="([^"]*)"') {
    foreach ($flag in ($Matches[1] -split '\\s+' | Where-Object { $_ -ne '' })) {
      $name, $value = $flag.TrimStart('-') -split '=', 2
      $want = $allowed[$name]
      if ($null -eq $want -or ($want -ne '*' -and $want -ne $value)) { $lost += $flag }
    }
  }
  if ($lost.Count -gt 0) {
    throw ("kubeadm wrote kubelet flags that nothing reads on Windows: " + ($lost -join ' ') + '. Move them into the kubeletconfiguration patch or the service command line.')
  }
}
`;
}

export function join(node: PlanNode): WindowsScripts {
  const apply = `${SERVICE_FUNCTIONS}Set-KubemixRestart -Name 'kubelet' -Enabled $false
& ${q(`${WIN.bin}\\kubeadm.exe`)} join --config ${q(WIN.joinConfig)}
$joinExit = $LASTEXITCODE
# The join configuration holds the bootstrap token: it has served its purpose.
Remove-Item -Force -LiteralPath ${q(WIN.joinConfig)}
if ($joinExit -ne 0) { throw "kubeadm join exited $joinExit" }
${flagsEnvCheck(node)}Set-KubemixRestart -Name 'kubelet' -Enabled $true
`;
  return { check: checkThat(`Test-Path -LiteralPath ${q(WIN.kubeletKubeconfig)}`), apply };
}

/** Waits until flanneld wrote subnet.env and its HNS network exists. */
export function waitForFlannel(network: string, seconds: number): string {
  return `${HNS_FUNCTIONS}$deadline = (Get-Date).AddSeconds(${seconds})
while (-not ((Test-Path -LiteralPath ${q(WIN.subnetEnv)}) -and $null -ne (Get-KubemixHnsNetwork -Name ${q(network)}))) {
  if ((Get-Date) -gt $deadline) { throw ${q(`flanneld did not create ${network} and ${WIN.subnetEnv} within ${seconds} s`)} }
  Start-Sleep -Seconds 3
}
`;
}

/**
 * The kube-flannel-ds-windows pod runs flanneld once the node has joined;
 * wait for the network it creates (the image may still be pulling).
 */
export function flannelPod(model: ClusterModel): WindowsScripts {
  const network = hnsNetworkName(model.overlay);
  return {
    check: `${HNS_FUNCTIONS}${checkThat(`(Test-Path -LiteralPath ${q(WIN.subnetEnv)}) -and $null -ne (Get-KubemixHnsNetwork -Name ${q(network)})`)}`,
    apply: waitForFlannel(network, 900),
  };
}
