// Steps 7–8 of a Windows worker: kubeadm join, then flanneld under WinSW.
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { registeredName } from './kubeadm.js';
import { hnsNetworkName } from './network.js';
import { CONTAINERD_PIPE, WIN } from './paths.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';
import { TOKEN_FUNCTIONS, installTokenScript, tokenCheckPrelude, tokenCurrent } from './token.js';

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

export const FLANNEL_TOKEN_REF = `{{secret:${SECRET_NAMES.flannelWindowsToken}}}`;

export function flanneld(model: ClusterModel, node: PlanNode): WindowsScripts {
  const network = hnsNetworkName(model.overlay);
  const wrapper = `${WIN.flanneldDir}\\flanneld-service.exe`;
  // Its own ServiceAccount token (flannel-windows), never the kubelet's credential.
  const apply = `${SERVICE_FUNCTIONS}${TOKEN_FUNCTIONS}New-Item -ItemType Directory -Force -Path ${q('C:\\run\\flannel')}, ${q(`${WIN.logs}\\flanneld`)} | Out-Null
Set-KubemixPrivateAcl -Path ${q(WIN.flanneldKubeconfig)}
${installTokenScript(FLANNEL_TOKEN_REF, WIN.flanneldToken, SECRET_NAMES.flannelWindowsToken)}if ($null -eq (Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue)) {
  & ${q(wrapper)} install
  if ($LASTEXITCODE -ne 0) { throw "WinSW could not install flanneld (exit $LASTEXITCODE)" }
}
Set-KubemixServiceEnvironment -Name 'flanneld' -Values @(${q(`NODE_NAME=${registeredName(node)}`)})
Set-KubemixRestart -Name 'flanneld' -Enabled $true
# Creating ${network} drops the host's network for a moment: the executor retries the session.
Start-Service -Name 'flanneld'
${waitForFlannel(network, 180)}`;
  return {
    // A longer-lived token in the store (the next kubemix up re-minted it) re-runs the step.
    check: `${HNS_FUNCTIONS}${tokenCheckPrelude(FLANNEL_TOKEN_REF)}${checkThat(`(Get-Service -Name 'flanneld' -ErrorAction SilentlyContinue).Status -eq 'Running' -and ${tokenCurrent(WIN.flanneldToken)} -and (Test-Path -LiteralPath ${q(WIN.subnetEnv)}) -and $null -ne (Get-KubemixHnsNetwork -Name ${q(network)})`)}`,
    apply,
  };
}

/**
 * HostProcess mode: the kube-flannel-ds-windows pod runs flanneld once the
 * node has joined; wait for the network it creates (the image may still be
 * pulling).
 */
export function flannelPod(model: ClusterModel): WindowsScripts {
  const network = hnsNetworkName(model.overlay);
  return {
    check: `${HNS_FUNCTIONS}${checkThat(`(Test-Path -LiteralPath ${q(WIN.subnetEnv)}) -and $null -ne (Get-KubemixHnsNetwork -Name ${q(network)})`)}`,
    apply: waitForFlannel(network, 900),
  };
}
