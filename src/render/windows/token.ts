// The Windows kube-proxy's ServiceAccount token: installed from the secret
// store by win-kube-proxy, renewed by the node itself every day (a scheduled
// task calling the TokenRequest API with the token it holds). kube-proxy
// reads it through `tokenFile`, which client-go re-reads every minute, so a
// renewal needs no restart.
import { KUBE_PROXY_TOKEN, tokenRequestPath } from '../../render/manifests/kube-proxy-token.js';
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { ACL_FUNCTIONS, q } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export const TOKEN_RENEW_TASK = 'kubemix-kube-proxy-token';

/**
 * JWT expiry, and a private file written without a readable moment. Carries
 * the ACL function it calls, so it never depends on what a caller defined first.
 */
export const TOKEN_FUNCTIONS = `${ACL_FUNCTIONS}function Get-KubemixTokenExpiry([string]$Jwt) {
  # The exp claim (seconds since 1970) of a JWT; 0 when it cannot be read.
  try {
    $part = $Jwt.Split('.')[1].Replace('-', '+').Replace('_', '/')
    while ($part.Length % 4 -ne 0) { $part += '=' }
    $claims = [System.Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($part)) | ConvertFrom-Json
    return [long]$claims.exp
  } catch {
    return [long]0
  }
}
function Set-KubemixPrivateFile([string]$Path, [string]$Value) {
  # Created empty, locked to SYSTEM and Administrators, then filled and moved
  # into place (a move on one volume keeps the ACL).
  $tmp = $Path + '.new'
  Set-Content -LiteralPath $tmp -Value '' -NoNewline
  Set-KubemixPrivateAcl -Path $tmp
  Set-Content -LiteralPath $tmp -Value $Value -NoNewline -Encoding ASCII
  Move-Item -Force -LiteralPath $tmp -Destination $Path
}
`;

/** win-kube-proxy's part: install the store's token unless the node holds one that lives longer. */
export function installTokenScript(secretRef: string): string {
  return `$stored = @'
${secretRef}
'@
$stored = $stored.Trim()
$present = ''
if (Test-Path -LiteralPath ${q(WIN.kubeProxyToken)}) { $present = ([string](Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyToken)})).Trim() }
# The node renews its own token: a re-run must not replace it with an older one.
if ((Get-KubemixTokenExpiry $stored) -gt (Get-KubemixTokenExpiry $present)) { Set-KubemixPrivateFile -Path ${q(WIN.kubeProxyToken)} -Value $stored }
if ((Get-KubemixTokenExpiry ([string](Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyToken)}))) -le [DateTimeOffset]::UtcNow.ToUnixTimeSeconds()) { throw 'the kube-proxy token has expired: re-run the kube-proxy-windows-token task on the first controller' }
`;
}

/** The renewal script the scheduled task runs (as SYSTEM). */
export function tokenRenewScript(model: ClusterModel): string {
  const api = model.cluster.apiEndpoint;
  const url = `https://${api.host}:${api.port}${tokenRequestPath()}`;
  const request = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: KUBE_PROXY_TOKEN.lifetimeHours * 3600 } });
  const dir = WIN.kubeProxyDir;
  return `$ErrorActionPreference = 'Stop'
${TOKEN_FUNCTIONS}$headers = ${q(`${dir}\\renew.headers`)}
$body = ${q(`${dir}\\renew.request.json`)}
$response = ${q(`${dir}\\renew.response.json`)}
$current = ([string](Get-Content -Raw -LiteralPath ${q(WIN.kubeProxyToken)})).Trim()
try {
  # The bearer token goes to curl in a private file, never on its command line.
  Set-KubemixPrivateFile -Path $headers -Value ('Authorization: Bearer ' + $current)
  Set-KubemixPrivateFile -Path $response -Value ''
  Set-Content -LiteralPath $body -Value ${q(request)} -NoNewline -Encoding ASCII
  # In-box curl.exe (Schannel) verifies the API server against the cluster CA;
  # Windows PowerShell 5.1 cannot take a CA file. The API is on the node network: no proxy.
  # kubeadm's CA publishes no revocation list, so Schannel's revocation check could only fail.
  $curlArgs = @('--silent', '--show-error', '--fail', '--ssl-no-revoke', '--noproxy', '*', '--max-time', '60', '--cacert', ${q(WIN.caCert)}, '--header', ('@' + $headers), '--header', 'Content-Type: application/json', '--data-binary', ('@' + $body), '--output', $response, ${q(url)})
  & (Join-Path $env:SystemRoot 'System32\\curl.exe') @curlArgs
  if ($LASTEXITCODE -ne 0) { throw "curl.exe exited $LASTEXITCODE" }
  $renewed = [string](Get-Content -Raw -LiteralPath $response | ConvertFrom-Json).status.token
  if ((Get-KubemixTokenExpiry $renewed) -le (Get-KubemixTokenExpiry $current)) { throw 'the API server returned no longer-lived token' }
  Set-KubemixPrivateFile -Path ${q(WIN.kubeProxyToken)} -Value $renewed
} finally {
  foreach ($f in $headers, $response) { if (Test-Path -LiteralPath $f) { Remove-Item -Force -LiteralPath $f } }
}
`;
}

/**
 * task-post-deployment: a daily scheduled task renews the token (runs missed
 * days at the next start); the apply runs it once, so a broken renewal path
 * (RBAC, CA, curl) fails the deploy instead of kube-proxy a month later.
 */
export function tokenRenewal(): WindowsScripts {
  const run = `-NoProfile -ExecutionPolicy Bypass -File "${WIN.tokenRenewScript}"`;
  const apply = `$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ${q(run)}
$trigger = New-ScheduledTaskTrigger -Daily -At '03:00' -RandomDelay (New-TimeSpan -Hours 1)
$settings = New-ScheduledTaskSettingsSet -StartWhenAvailable
$principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
Register-ScheduledTask -TaskName ${q(TOKEN_RENEW_TASK)} -Action $action -Trigger $trigger -Settings $settings -Principal $principal -Force | Out-Null
& powershell.exe -NoProfile -ExecutionPolicy Bypass -File ${q(WIN.tokenRenewScript)}
if ($LASTEXITCODE -ne 0) { throw "renewing the kube-proxy token failed ($LASTEXITCODE)" }
`;
  const check = checkThat(`$null -ne (Get-ScheduledTask -TaskName ${q(TOKEN_RENEW_TASK)} -ErrorAction SilentlyContinue)`);
  return { check, apply };
}
