// What the Windows flanneld and kube-proxy HostProcess pods start: a small
// script on the host (the pods run as SYSTEM and see the host's files), run
// at every start of the pod, so what a start needs is redone every time
// rather than once at plan time.
//
// kube-proxy's: wait for the pod network's HNS network, take its source VIP
// (flannel vxlan: reserved with host-local in the network's current subnet,
// kept while it still lies in it; Calico: its host endpoint's address), write
// its config from the node's template, then run kube-proxy. kube-proxy itself
// clears HNS policy lists left from before its start (winkernel NewProxier:
// "Cleaning up old HNS policy lists", every load balancer, since ~1.15), waits
// for the network (getNetworkInfo retries every second), and when the network
// is rebuilt under it drops what it programmed and programs it again (its
// sync compares the network's id: "The HNS network is not present or has
// changed since the last sync") and recreates the source VIP endpoint it finds
// missing (kubernetes/kubernetes pkg/proxy/winkernel). So, unlike
// sig-windows-tools' Calico start.ps1 (which removes every policy list itself
// before kube-proxy starts, a 2020 workaround), nothing is deleted here; a new
// start after every rebuild — the pod restarting, or the node rebooting,
// where flannel's network is not persistent (flannel device_windows.go,
// EnableNonPersistent) — is what keeps the source VIP in the subnet.
//
// Both retire the Windows services earlier kubemix versions ran them as (by
// name, only when their command line is kubemix's), so a service and a pod
// never run side by side on a node whose cluster moved to the pods.
import type { ClusterModel } from '../../model/resolve.js';
import { CALICO_WINDOWS } from '../../matrix/index.js';
import { CALICO_ENDPOINT_FUNCTION } from './calico.js';
import { hnsNetworkName } from './network.js';
import { SOURCE_VIP_PLACEHOLDER, WIN } from './paths.js';
import { HNS_FUNCTIONS, q } from './ps.js';
import { flanneldArgs } from './services.js';

/** The services earlier kubemix versions ran, each with the file its command line names (kubemix's, not an admin's). */
export const RETIRED_SERVICES = [
  { name: 'kube-proxy', marker: `${WIN.bin}\\kube-log-runner.exe` },
  { name: 'flanneld', marker: `${WIN.flanneldDir}\\flanneld-service.exe` },
] as const;

/** Stops and deletes a retired service of that name whose command line is kubemix's; leaves any other alone. */
export const RETIRE_SERVICE_FUNCTION = `function Remove-KubemixRetiredService([string]$Name, [string]$Marker) {
  $svc = Get-CimInstance -ClassName Win32_Service -Filter "Name='$Name'"
  if ($null -eq $svc -or -not ([string]$svc.PathName).Contains($Marker)) { return }
  & sc.exe failure $Name reset= 0 actions= none/0/none/0/none/0 | Out-Null
  if ([string]$svc.State -ne 'Stopped') { Stop-Service -Name $Name -Force }
  & sc.exe delete $Name | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe delete $Name exited $LASTEXITCODE" }
  Write-Output "kubemix: retired the $Name service of an earlier kubemix; the pod runs it now"
}
`;

const retire = (name: 'kube-proxy' | 'flanneld'): string => {
  const s = RETIRED_SERVICES.find((r) => r.name === name);
  return `Remove-KubemixRetiredService -Name ${q(name)} -Marker ${q(s?.marker ?? '')}\n`;
};

/** The binary a pod runs: from its image's root (`fromImages`) or kubemix's verified copy on the host. */
function exe(model: ClusterModel, name: 'flanneld.exe' | 'kube-proxy.exe'): string {
  return model.windowsHostProcess?.fromImages === true
    ? `(Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT ${q(name)})`
    : q(`${WIN.bin}\\${name}`);
}

/** flanneld's: retire the old service, then run flanneld with the pod's own token (in-cluster config). */
export function flanneldLauncher(model: ClusterModel): string {
  const args = flanneldArgs({ ip: '$env:NODE_IP' }).map((a) => (a.includes('$env:') ? `"${a}"` : q(a)));
  return `$ErrorActionPreference = 'Stop'
# Rendered by kubemix: the kube-flannel-ds-windows pod runs this at every start.
${RETIRE_SERVICE_FUNCTION}${retire('flanneld')}New-Item -ItemType Directory -Force -Path ${q('C:\\run\\flannel')} | Out-Null
& ${exe(model, 'flanneld.exe')} ${args.join(' ')}
exit $LASTEXITCODE
`;
}

/** The source VIP on flannel's overlay: the one reserved before while it lies in the network's subnet, else a new one. */
const FLANNEL_SOURCE_VIP = (network: string): string => `function Test-KubemixInSubnet([string]$Ip, [string]$Cidr) {
  $base, $bits = $Cidr.Split('/')
  $mask = [uint32]([math]::Pow(2, 32) - [math]::Pow(2, 32 - [int]$bits))
  $toInt = { param($a) $b = ([Net.IPAddress]::Parse($a)).GetAddressBytes(); [Array]::Reverse($b); [BitConverter]::ToUInt32($b, 0) }
  return ((& $toInt $Ip) -band $mask) -eq ((& $toInt $base) -band $mask)
}
$subnet = @($net.Subnets)[0].AddressPrefix
$vip = ''
if (Test-Path -LiteralPath ${q(WIN.sourceVipFile)}) {
  $kept = (Get-Content -Raw -LiteralPath ${q(WIN.sourceVipFile)} | ConvertFrom-Json).ip
  if ($kept -match '^\\d+\\.\\d+\\.\\d+\\.\\d+$' -and (Test-KubemixInSubnet -Ip $kept -Cidr $subnet)) { $vip = $kept }
}
if ($vip -eq '') {
  # Reserved with host-local on the network name and data directory the pods use; kube-proxy creates the endpoint.
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
  $vip = ((@((($out -join [Environment]::NewLine) | ConvertFrom-Json).ips)[0].address) -split '/')[0]
  if ($vip -notmatch '^\\d+\\.\\d+\\.\\d+\\.\\d+$') { throw "host-local returned no address: $out" }
}
Set-Content -LiteralPath ${q(WIN.sourceVipFile)} -Value (@{ ip = $vip; subnet = $subnet } | ConvertTo-Json)
`;

/** Calico's overlay: the source VIP is its host endpoint's address (calico-node-windows makes it after every boot). */
const CALICO_SOURCE_VIP = `while ($null -eq (Get-KubemixCalicoEndpoint)) {
  Write-Output ${q(`waiting for Calico's host endpoint ${CALICO_WINDOWS.hostEndpoint}`)}
  Start-Sleep -Seconds 5
}
$vip = [string](Get-KubemixCalicoEndpoint).IPAddress
if ($vip -notmatch '^\\d+\\.\\d+\\.\\d+\\.\\d+$') { throw "${CALICO_WINDOWS.hostEndpoint} has no IPv4 address: $vip" }
Set-Content -LiteralPath ${q(WIN.sourceVipFile)} -Value (@{ ip = $vip; subnet = @($net.Subnets)[0].AddressPrefix } | ConvertTo-Json)
`;

/** kube-proxy's: retire the old service, wait for the network, the source VIP, the config, then kube-proxy. */
export function kubeProxyLauncher(model: ClusterModel): string {
  const network = hnsNetworkName(model.overlay);
  const calico = model.overlay.plugin === 'calico';
  const overlay = model.overlay.vxlan !== undefined;
  const vip = !overlay ? '' : calico ? CALICO_SOURCE_VIP : FLANNEL_SOURCE_VIP(network);
  return `$ErrorActionPreference = 'Stop'
# Rendered by kubemix: the kube-proxy-windows pod runs this at every start.
${RETIRE_SERVICE_FUNCTION}${HNS_FUNCTIONS}${calico ? CALICO_ENDPOINT_FUNCTION : ''}${retire('kube-proxy')}while ($null -eq ($net = Get-KubemixHnsNetwork -Name ${q(network)})) {
  Write-Output ${q(`waiting for the HNS network ${network}`)}
  Start-Sleep -Seconds 5
}
${vip}$config = Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyConfigTemplate)}
${overlay ? `$config = $config.Replace(${q(SOURCE_VIP_PLACEHOLDER)}, $vip)\n` : ''}New-Item -ItemType Directory -Force -Path ${q(WIN.kubeProxyDir)} | Out-Null
Set-Content -LiteralPath ${q(WIN.kubeProxyConfig)} -Value $config -NoNewline
& ${exe(model, 'kube-proxy.exe')} ${q(`--config=${WIN.kubeProxyConfig}`)}
exit $LASTEXITCODE
`;
}
