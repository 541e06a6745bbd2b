// ServiceAccount tokens on a Windows node (kube-proxy's, and flanneld's when
// it runs as a service): minted by the executor on the first controller,
// installed here from the secret store into a file only SYSTEM and
// Administrators can read, which the service's kubeconfig names as
// `tokenFile` (client-go re-reads it every minute, so a newer token needs no
// restart). The node never requests tokens itself: renewal is the next
// `kubemix up`, whose check sees the store holding a longer-lived token.
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { ACL_FUNCTIONS, q } from './ps.js';

/** The owner-only ACL function (SYSTEM and Administrators), for callers that need it without the token functions. */
export const RESTRICT_ACL = ACL_FUNCTIONS;

/** A scheduled task earlier kubemix versions used to renew kube-proxy's token from the node; removed on sight. */
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
function Get-KubemixTokenFile([string]$Path) {
  if (-not (Test-Path -LiteralPath $Path)) { return '' }
  return ([string](Get-Content -Raw -LiteralPath $Path)).Trim()
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

const stored = (secretRef: string): string => `$stored = @'
${secretRef}
'@
$stored = $stored.Trim()
`;

/**
 * Install the store's token at `path` unless the node holds one that lives
 * at least as long (so a re-run never replaces a newer token with an older
 * one); refuse an expired one. Needs RESTRICT_ACL and TOKEN_FUNCTIONS.
 */
export function installTokenScript(secretRef: string, path: string, mintTask: string): string {
  return `${stored(secretRef)}if ((Get-KubemixTokenExpiry $stored) -gt (Get-KubemixTokenExpiry (Get-KubemixTokenFile ${q(path)}))) { Set-KubemixPrivateFile -Path ${q(path)} -Value $stored }
if ((Get-KubemixTokenExpiry (Get-KubemixTokenFile ${q(path)})) -le [DateTimeOffset]::UtcNow.ToUnixTimeSeconds()) { throw ${q(`the token in ${path} has expired: re-run the ${mintTask} task on the first controller (kubemix up)`)} }
`;
}

/** Check condition (after TOKEN_FUNCTIONS and `tokenCheckPrelude`): the node's token lives as long as the store's. */
export function tokenCurrent(path: string): string {
  return `((Get-KubemixTokenExpiry (Get-KubemixTokenFile ${q(path)})) -ge (Get-KubemixTokenExpiry $stored))`;
}

/** What a check needs before `tokenCurrent`: the functions and the store's token. */
export function tokenCheckPrelude(secretRef: string): string {
  return `${TOKEN_FUNCTIONS}${stored(secretRef)}`;
}

/** Remove the node-side renewal task of earlier versions: its credential may no longer mint. */
export const DROP_OLD_RENEWAL = `Unregister-ScheduledTask -TaskName ${q(TOKEN_RENEW_TASK)} -Confirm:$false -ErrorAction SilentlyContinue
`;

/** A kubeconfig that authenticates with a ServiceAccount token file (it holds no secret itself). */
export function tokenKubeconfig(model: ClusterModel, user: string, tokenFile: string): string {
  const api = model.cluster.apiEndpoint;
  return `apiVersion: v1
kind: Config
clusters:
  - name: kubernetes
    cluster:
      server: 'https://${api.host}:${api.port}'
      certificate-authority: '${WIN.caCert}'
users:
  - name: ${user}
    user:
      tokenFile: '${tokenFile}'
contexts:
  - name: ${user}
    context:
      cluster: kubernetes
      user: ${user}
current-context: ${user}
`;
}
