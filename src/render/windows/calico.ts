// A Windows worker with Calico (cni.plugin: calico): what differs from flannel.
// The operator runs calico-node-windows as a HostProcess DaemonSet; on its
// first start after each boot its node service deletes every HNS network
// that is not NAT and creates its own "External" (Overlay, VSID 9999, for
// vxlan) before felix builds the pod network "Calico"
// (projectcalico/calico node/windows-packaging/CalicoWindows/node/node-service.ps1,
// release v3.32). So kubemix creates no External network of its own here,
// writes no CNI config (calico-node-windows' install-cni writes
// 10-calico.conflist and calico-kubeconfig), and the kube-proxy pod's
// launcher reads its source VIP from Calico's host endpoint (launchers.ts)
// instead of reserving one.
import { CALICO_WINDOWS } from '../../matrix/index.js';
import { WIN } from './paths.js';
import { HNS_FUNCTIONS, q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

/** The files install-cni leaves in the CNI config directory (and nothing else may be there). */
export const CALICO_CNI_FILES = [CALICO_WINDOWS.cniConfName, CALICO_WINDOWS.cniKubeconfigName] as const;

export const CALICO_ENDPOINT_FUNCTION = `function Get-KubemixCalicoEndpoint {
  return @(Invoke-KubemixHns -Method 'GET' -Path '/endpoints/') | Where-Object { $_.Name -eq ${q(CALICO_WINDOWS.hostEndpoint)} } | Select-Object -First 1
}
`;

/** Calico's network, its host endpoint and its CNI config all present (needs the HNS and endpoint functions). */
export const CALICO_READY = `($null -ne (Get-KubemixHnsNetwork -Name ${q(CALICO_WINDOWS.network)})) -and ($null -ne (Get-KubemixCalicoEndpoint)) -and (Test-Path -LiteralPath ${q(`${WIN.cniConfDir}\\${CALICO_WINDOWS.cniConfName}`)})`;

/**
 * After the join: wait for the calico-node-windows pod (which the operator
 * schedules once the node registers) to build the pod network, then make sure
 * no other CNI config sits beside Calico's (the runtime takes the first file).
 */
export function calicoNodeWait(seconds: number): WindowsScripts {
  const apply = `${HNS_FUNCTIONS}${CALICO_ENDPOINT_FUNCTION}${calicoWaitLoop(seconds)}`;
  const only = `@(Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File | Where-Object { ${qList([...CALICO_CNI_FILES])} -notcontains $_.Name }).Count -eq 0`;
  return { check: `${HNS_FUNCTIONS}${CALICO_ENDPOINT_FUNCTION}${checkThat(`${CALICO_READY} -and ${only}`)}`, apply };
}

/**
 * The wait itself, for scripts that already define the HNS and endpoint
 * functions: the join's step above, and an upgrade's restart of the kubelet
 * (calico-node-windows is one of its pods, so the network comes back after it).
 */
export function calicoWaitLoop(seconds: number): string {
  return `$deadline = (Get-Date).AddSeconds(${seconds})
while (-not (${CALICO_READY})) {
  if ((Get-Date) -gt $deadline) { throw ${q(`calico-node-windows did not create the HNS network ${CALICO_WINDOWS.network}, its endpoint ${CALICO_WINDOWS.hostEndpoint} and ${CALICO_WINDOWS.cniConfName} within ${seconds} s: see kubectl -n calico-system logs ds/calico-node-windows`)} }
  Start-Sleep -Seconds 5
}
foreach ($f in Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File) {
  if (${qList([...CALICO_CNI_FILES])} -notcontains $f.Name) { Remove-Item -Force -LiteralPath $f.FullName }
}
`;
}

/** What a reset removes beyond flannel's list: Calico's files, its CNI config and its boot-time marker. */
export const CALICO_RESET_PATHS = [
  ...CALICO_CNI_FILES.map((f) => `${WIN.cniConfDir}\\${f}`),
  `${WIN.cniBin}\\calico.exe`,
  `${WIN.cniBin}\\calico-ipam.exe`,
  `${WIN.logs}\\calico`,
  CALICO_WINDOWS.rootDir,
];

/**
 * Calico's HNS networks (its External and Calico) are removed with their
 * endpoints by name, like flannel's; its registry key goes too, or a
 * re-install after the reset would skip the first-boot network clean-up.
 */
export const CALICO_RESET_REGISTRY = `if (Test-Path -LiteralPath ${q(CALICO_WINDOWS.registryKey)}) { Remove-Item -Recurse -Force -LiteralPath ${q(CALICO_WINDOWS.registryKey)} }
`;
