// Steps 1–3 of a Windows worker: preflight, the Containers feature (and its
// reboot), and the persistent "External" HNS network.
import { windowsRelease } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { EXTERNAL_NETWORK, hnsNetworkName } from './network.js';
import { WIN } from './paths.js';
import { HNS_FUNCTIONS, q } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

/** NetBIOS computer names are at most 15 characters. */
export const NETBIOS_MAX = 15;
export const MIN_FREE_DISK_GIB = 30;
export const MIN_RAM_MIB = 3500;

const JOINED = `(Test-Path -LiteralPath ${q(WIN.kubeletKubeconfig)})`;

export function preflight(model: ClusterModel, node: PlanNode): WindowsScripts {
  const build = windowsRelease(node.os)?.build ?? '';
  const cni = model.overlay.plugin === 'calico' ? 'Calico' : 'flannel';
  const cniVar = model.overlay.plugin === 'calico' ? 'calico' : 'flannel';
  const apply = `$problems = New-Object System.Collections.Generic.List[string]
$os = Get-CimInstance -ClassName Win32_OperatingSystem
if ($os.Version -ne ${q(build)}) { $problems.Add("build $($os.Version), the spec says ${node.os} (${build})") }
if ($env:COMPUTERNAME.Length -gt ${NETBIOS_MAX}) { $problems.Add("computer name $env:COMPUTERNAME is longer than ${NETBIOS_MAX} characters") }
if (${q(node.name)}.Length -gt ${NETBIOS_MAX}) { $problems.Add('node name ${node.name} is longer than ${NETBIOS_MAX} characters') }
$freeGiB = [int]((Get-PSDrive -Name C).Free / 1073741824)
if ($freeGiB -lt ${MIN_FREE_DISK_GIB}) { $problems.Add("$freeGiB GiB free on C:, need ${MIN_FREE_DISK_GIB}") }
$ramMiB = [int]($os.TotalVisibleMemorySize / 1024)
if ($ramMiB -lt ${MIN_RAM_MIB}) { $problems.Add("$ramMiB MiB RAM, need ${MIN_RAM_MIB}") }
$pending = @(
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Component Based Servicing\\RebootPending',
  'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\WindowsUpdate\\Auto Update\\RebootRequired'
) | Where-Object { Test-Path -LiteralPath $_ }
if (@($pending).Count -gt 0) { $problems.Add('a reboot is pending: reboot the host first') }
$leftovers = @(${q(WIN.subnetEnv)}, ${q(WIN.cniState)}, ${q(WIN.kubeletKubeconfig)}, ${q(WIN.kubeletCertDir)}) | Where-Object { Test-Path -LiteralPath $_ }
foreach ($path in $leftovers) { $problems.Add("$path is left from an earlier join") }
if (Test-Path -LiteralPath ${q(WIN.cniConfDir)}) {
  foreach ($f in Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File) { $problems.Add("CNI config directory holds $($f.Name)") }
}
if ($null -ne (Get-Service -Name 'hns' -ErrorAction SilentlyContinue)) {
${HNS_FUNCTIONS}  # ${cni}'s network from an earlier join; networks kubemix does not make (Docker's, an admin's) are not ours to judge.
  $${cniVar} = @(Invoke-KubemixHns -Method 'GET' -Path '/networks/') | Where-Object { $_.Name -eq ${q(hnsNetworkName(model.overlay))} }
  foreach ($n in $${cniVar}) { $problems.Add("HNS network $($n.Name) is left from an earlier setup") }
}
if ($problems.Count -gt 0) {
  throw ("${node.name} is not ready for kubemix:\`n  " + ($problems -join "\`n  ") + "\`nLeftovers from an earlier join: reset the node with 'kubemix down SPEC --only ${node.name}', then run up again.")
}
`;
  // A node kubemix already joined is past preflight: re-running the plan must not trip on its own state.
  return { check: checkThat(JOINED), apply };
}

export function containersFeature(): WindowsScripts {
  return {
    check: checkThat(`(Get-WindowsFeature -Name 'Containers').Installed`),
    apply: `$result = Install-WindowsFeature -Name 'Containers'
if (-not $result.Success) { throw 'installing the Containers feature failed' }
`,
  };
}

/** Reboots only when Windows says a reboot is pending. */
export function rebootAfterFeature(): WindowsScripts {
  const pending = `(Test-Path -LiteralPath 'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Component Based Servicing\\RebootPending')`;
  return {
    check: checkThat(`-not ${pending} -and (Get-Service -Name 'hns' -ErrorAction SilentlyContinue)`),
    apply: `# Delay so this SSH session returns before the host goes down.
& shutdown.exe /r /t 10 /c 'kubemix: finishing the Containers feature'
if ($LASTEXITCODE -ne 0) { throw "shutdown.exe exited $LASTEXITCODE" }
`,
  };
}

/** The adapter carrying the node IP (inside its vSwitch once HNS made one). */
const ADAPTER = (ip: string) => `$alias = (Get-NetIPAddress -IPAddress ${q(ip)} -AddressFamily IPv4).InterfaceAlias
if ($alias -match '^vEthernet \\((.+)\\)$') { $alias = $Matches[1] }`;

/** Creates the External network if it is missing, with HNS_FUNCTIONS. */
export function ensureExternalNetwork(model: ClusterModel, node: PlanNode): string {
  return `${HNS_FUNCTIONS}${createExternalNetwork(model, node)}`;
}

/** Creates the External network if it is missing; needs HNS_FUNCTIONS defined (the boot script defines them once). */
export function createExternalNetwork(model: ClusterModel, node: PlanNode): string {
  const overlay = model.overlay.vxlan !== undefined;
  const policies = overlay ? `; Policies = @(@{ Type = 'VSID'; VSID = ${EXTERNAL_NETWORK.vsid} })` : '';
  return `if ($null -eq (Get-KubemixHnsNetwork -Name ${q(EXTERNAL_NETWORK.name)})) {
  ${ADAPTER(node.ip).replace(/\n/g, '\n  ')}
  $request = @{
    Name = ${q(EXTERNAL_NETWORK.name)}
    Type = ${q(overlay ? 'Overlay' : 'L2Bridge')}
    NetworkAdapterName = $alias
    Subnets = @(@{ AddressPrefix = ${q(EXTERNAL_NETWORK.cidr)}; GatewayAddress = ${q(EXTERNAL_NETWORK.gateway)}${policies} })
  } | ConvertTo-Json -Depth 5
  Invoke-KubemixHns -Method 'POST' -Path '/networks/' -Request $request | Out-Null
  # Creating the vSwitch drops the host's network for a moment.
  Start-Sleep -Seconds 10
}
`;
}

export function externalNetwork(model: ClusterModel, node: PlanNode): WindowsScripts {
  return {
    check: `${HNS_FUNCTIONS}${checkThat(`$null -ne (Get-KubemixHnsNetwork -Name ${q(EXTERNAL_NETWORK.name)})`)}`,
    apply: ensureExternalNetwork(model, node),
  };
}
