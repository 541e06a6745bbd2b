// Steps 9–11 of a Windows worker: the CNI config (after flanneld), the source
// VIP (vxlan, reserved at run time) and kube-proxy.
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { sha256Hex } from '../../util/json.js';
import { cniConfig, hnsNetworkName } from './network.js';
import { SOURCE_VIP_PLACEHOLDER, WIN } from './paths.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, q } from './ps.js';
import { kubeProxyCommandLine } from './services.js';
import { checkThat, type WindowsScripts } from './step.js';
import { DROP_OLD_RENEWAL, TOKEN_FUNCTIONS, installTokenScript, tokenCheckPrelude, tokenCurrent } from './token.js';

export function cniConfigStep(model: ClusterModel, node: PlanNode): WindowsScripts {
  const hash = sha256Hex(cniConfig(model, node)).toUpperCase();
  const name = WIN.cniConf.split('\\').pop() ?? '';
  // The CNI directory must hold only this file: the runtime takes the first one it finds.
  const apply = `foreach ($f in Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File) {
  if ($f.Name -ne ${q(name)}) { Remove-Item -Force -LiteralPath $f.FullName }
}
if ((Get-FileHash -Algorithm SHA256 -LiteralPath ${q(WIN.cniConf)}).Hash -ne ${q(hash)}) { throw 'the CNI config on the host differs from the plan' }
`;
  const check = checkThat(
    `(@(Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File -ErrorAction SilentlyContinue).Count -eq 1) -and (Test-Path -LiteralPath ${q(WIN.cniConf)}) -and (Get-FileHash -Algorithm SHA256 -LiteralPath ${q(WIN.cniConf)}).Hash -eq ${q(hash)}`,
  );
  return { check, apply };
}

/**
 * Reserve kube-proxy's source VIP with host-local, on the network name and
 * data directory the pods use, in the subnet HNS reports for flannel's
 * network. kube-proxy creates the endpoint itself; we only reserve.
 */
export function sourceVip(model: ClusterModel): WindowsScripts {
  const network = hnsNetworkName(model.overlay);
  const apply = `${HNS_FUNCTIONS}$net = Get-KubemixHnsNetwork -Name ${q(network)}
if ($null -eq $net) { throw ${q(`HNS network ${network} does not exist: is flanneld running?`)} }
$subnet = @($net.Subnets)[0].AddressPrefix
$request = '{"cniVersion":"0.3.0","name":' + (ConvertTo-Json ${q(network)}) + ',"ipam":{"type":"host-local","ranges":[[{"subnet":' + (ConvertTo-Json $subnet) + '}]],"dataDir":' + (ConvertTo-Json ${q(WIN.cniState)}) + '}}'
$env:CNI_COMMAND = 'ADD'
$env:CNI_CONTAINERID = 'kubemix-source-vip'
$env:CNI_NETNS = 'none'
$env:CNI_IFNAME = 'source-vip'
$env:CNI_PATH = ${q(WIN.cniBin)}
$out = $request | & ${q(`${WIN.cniBin}\\host-local.exe`)}
$cniExit = $LASTEXITCODE
foreach ($v in 'CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH') { Remove-Item -LiteralPath "Env:$v" }
if ($cniExit -ne 0) { throw "host-local.exe exited $cniExit" }
$result = ($out -join [Environment]::NewLine) | ConvertFrom-Json
$vip = (@($result.ips)[0].address -split '/')[0]
if ($vip -notmatch '^\\d+\\.\\d+\\.\\d+\\.\\d+$') { throw "host-local returned no address: $out" }
Set-Content -LiteralPath ${q(WIN.sourceVipFile)} -Value (@{ ip = $vip; subnet = $subnet } | ConvertTo-Json)
`;
  return { check: checkThat(`Test-Path -LiteralPath ${q(WIN.sourceVipFile)}`), apply };
}

/** kube-proxy's private kubeconfig and its config, with the source VIP reserved on the node. */
function kubeProxyFiles(model: ClusterModel): string {
  const vip =
    model.overlay.vxlan !== undefined
      ? `$vip = (Get-Content -Raw -LiteralPath ${q(WIN.sourceVipFile)} | ConvertFrom-Json).ip
$config = $config.Replace(${q(SOURCE_VIP_PLACEHOLDER)}, $vip)
`
      : '';
  // The kubeconfig reads the ServiceAccount token from a private file (tokenFile), in both modes.
  return `${TOKEN_FUNCTIONS}${DROP_OLD_RENEWAL}Set-KubemixPrivateAcl -Path ${q(WIN.kubeProxyKubeconfig)}
${installTokenScript(TOKEN_REF, WIN.kubeProxyToken, SECRET_NAMES.kubeProxyWindowsToken)}New-Item -ItemType Directory -Force -Path ${q(`${WIN.logs}\\kube-proxy`)} | Out-Null
$config = Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyConfigTemplate)}
${vip}Set-Content -LiteralPath ${q(WIN.kubeProxyConfig)} -Value $config -NoNewline
`;
}

const TOKEN_REF = `{{secret:${SECRET_NAMES.kubeProxyWindowsToken}}}`;

/** Files in place and the node's token at least as long-lived as the store's (a newer one re-runs the step). */
const configReady = `${tokenCurrent(WIN.kubeProxyToken)} -and (Test-Path -LiteralPath ${q(WIN.kubeProxyConfig)}) -and -not (Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyConfig)}).Contains(${q(SOURCE_VIP_PLACEHOLDER)})`;

/**
 * HostProcess mode: the node keeps kube-proxy's files (the pod reads them
 * from the host); the kube-proxy-windows DaemonSet runs the process.
 */
export function kubeProxyConfig(model: ClusterModel): WindowsScripts {
  return { check: `${tokenCheckPrelude(TOKEN_REF)}${checkThat(configReady)}`, apply: kubeProxyFiles(model) };
}

export function kubeProxy(model: ClusterModel): WindowsScripts {
  const cmd = kubeProxyCommandLine();
  const apply = `${SERVICE_FUNCTIONS}${kubeProxyFiles(model)}$binPath = ${q(cmd)}
if ($null -eq (Get-Service -Name 'kube-proxy' -ErrorAction SilentlyContinue)) {
  New-Service -Name 'kube-proxy' -BinaryPathName $binPath -DisplayName 'kube-proxy' -StartupType Automatic -DependsOn 'kubelet' | Out-Null
} else {
  & sc.exe config kube-proxy binPath= $binPath | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe config kube-proxy exited $LASTEXITCODE" }
}
Set-KubemixRestart -Name 'kube-proxy' -Enabled $true
Restart-Service -Name 'kube-proxy'
`;
  const check = `${tokenCheckPrelude(TOKEN_REF)}${checkThat(`(Get-Service -Name 'kube-proxy' -ErrorAction SilentlyContinue).Status -eq 'Running' -and ${configReady}`)}`;
  return { check, apply };
}
