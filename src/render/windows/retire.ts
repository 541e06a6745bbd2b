// What earlier kubemix versions left on a Windows node when flanneld and
// kube-proxy ran as services: one 90-day ServiceAccount token per service,
// minted once for every node and renewed only by `kubemix up`, in files
// beside their kubeconfigs, flanneld's WinSW wrapper, and a scheduled task an
// older version renewed kube-proxy's token with. The pods' launchers retire
// the services themselves (launchers.ts) when they take over; this step,
// after both pods run, removes the files, so no node keeps a token that
// outlives its use. Tokens already minted stay valid until they expire
// (they are bound to no object): docs/windows.md says how to revoke them.
import { WIN } from './paths.js';
import { q, qList } from './ps.js';
import { RETIRE_SERVICE_FUNCTION, RETIRED_SERVICES } from './launchers.js';
import { checkThat, type WindowsScripts } from './step.js';

/** A scheduled task earlier kubemix versions used to renew kube-proxy's token from the node. */
export const LEGACY_RENEW_TASK = 'kubemix-kube-proxy-token';

/** kube-proxy's files of the service mode, token first. */
const KUBE_PROXY_FILES = [WIN.kubeProxyToken, `${WIN.kubeProxyToken}.new`, WIN.kubeProxyKubeconfig] as const;
/** flanneld's (flannel clusters only). */
const FLANNELD_FILES = [
  WIN.flanneldToken,
  `${WIN.flanneldToken}.new`,
  WIN.flanneldKubeconfig,
  WIN.flanneldServiceXml,
  `${WIN.flanneldDir}\\flanneld-service.exe`,
] as const;

/** Every file of the service mode, tokens first. */
export const LEGACY_FILES = [...KUBE_PROXY_FILES, ...FLANNELD_FILES] as const;

export function retireLegacy(calico: boolean): WindowsScripts {
  const files = calico ? [...KUBE_PROXY_FILES] : [...LEGACY_FILES];
  const services = RETIRED_SERVICES.filter((s) => !calico || s.name === 'kube-proxy');
  const present = services
    .map(
      (s) =>
        `(@(Get-CimInstance -ClassName Win32_Service -Filter "Name='${s.name}'" | Where-Object { ([string]$_.PathName).Contains(${q(s.marker)}) }).Count -gt 0)`,
    )
    .join(' -or ');
  const left = `(@(${qList(files)} | Where-Object { Test-Path -LiteralPath $_ }).Count -gt 0)`;
  const task = `($null -ne (Get-ScheduledTask -TaskName ${q(LEGACY_RENEW_TASK)} -ErrorAction SilentlyContinue))`;
  return {
    check: checkThat(`-not (${left} -or ${task} -or ${present})`),
    apply: `${RETIRE_SERVICE_FUNCTION}${services.map((s) => `Remove-KubemixRetiredService -Name ${q(s.name)} -Marker ${q(s.marker)}`).join('\n')}
Unregister-ScheduledTask -TaskName ${q(LEGACY_RENEW_TASK)} -Confirm:$false -ErrorAction SilentlyContinue
foreach ($path in ${qList(files)}) {
  if (Test-Path -LiteralPath $path) { Remove-Item -Force -LiteralPath $path; Write-Output "removed $path" }
}
`,
  };
}
