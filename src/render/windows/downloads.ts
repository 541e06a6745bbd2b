// Downloads on a Windows worker: from the services node's cache (HTTPS,
// trusting only the cluster CA, no proxy) or, without a services node, from
// the source through the spec's proxy; cached per version under C:\k\cache
// and installed only when the SHA256 equals the one the executor verified on
// the deployer (`{{sha256:ID}}`, filled in at run time).
import { windowsDownloads, type WindowsDownload } from '../../matrix/index.js';
import { downloadCache, mirroredUrl, nodeFetchUrl, sha256Ref } from '../../model/downloads.js';
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { WIN } from './paths.js';
import { q } from './ps.js';

/** `https://host/path` → `<mirror>/host/path` when the spec names an artifact mirror. */
export function mirrored(url: string, mirror: string | undefined): string {
  return mirroredUrl(url, mirror);
}

export function downloadsFor(model: ClusterModel): WindowsDownload[] {
  return windowsDownloads(model.versions.kubernetes, model.versions.containerd);
}

/** The proxy a node downloads through (HTTPS first: every origin is HTTPS). */
export function proxyOf(model: ClusterModel): string {
  return model.proxy?.https ?? model.proxy?.http ?? '';
}

/** Secrets a script with `downloadFunction` refers to: the cluster CA when the cache serves it. */
export function downloadSecrets(model: ClusterModel): string[] {
  return downloadCache(model) === undefined ? [] : [SECRET_NAMES.clusterCaCert];
}

const CA_FILE = `${WIN.kubemix}\\cluster-ca.crt`;

/**
 * `Get-KubemixDownload`: the verified file's path in the cache. It names no
 * model value (the script sets `$kubemixFetch`, curl.exe's source options,
 * before calling it), so every node and plan shares its text.
 */
export const DOWNLOAD_FUNCTION = `function Get-KubemixDownload([string]$Name, [string]$Version, [string]$Url, [string]$Hash) {
  if ($Hash -notmatch '^[0-9a-fA-F]{64}$') { throw "no verified SHA256 for $Name $Version (the executor fills it in)" }
  $dir = Join-Path ${q(WIN.cache)} $Version
  New-Item -ItemType Directory -Force -Path $dir | Out-Null
  $file = Join-Path $dir $Name
  if ((Test-Path -LiteralPath $file) -and (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash -eq $Hash) { return $file }
  $partial = "$file.partial"
  & curl.exe --fail --silent --show-error --location --retry 3 @kubemixFetch --output $partial $Url
  if ($LASTEXITCODE -ne 0) { throw "could not fetch $Name $Version from $Url (curl.exe exit $LASTEXITCODE)" }
  $actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $partial).Hash
  if ($actual -ne $Hash) {
    Remove-Item -Force -LiteralPath $partial
    throw "SHA256 mismatch for $Name $Version from $Url (got $actual, want $Hash); nothing installed"
  }
  Move-Item -Force -LiteralPath $partial -Destination $file
  return $file
}
`;

/** Sets `$kubemixFetch` for this model's source and defines `Get-KubemixDownload`. */
export function downloadFunction(model: ClusterModel): string {
  const cached = downloadCache(model) !== undefined;
  // curl.exe ships with Windows Server 2019 and later; Schannel cannot reach a CRL for the cluster CA (--ssl-no-revoke).
  const source = cached
    ? `New-Item -ItemType Directory -Force -Path ${q(WIN.kubemix)} | Out-Null
Set-Content -LiteralPath ${q(CA_FILE)} -Value @'
{{secret:${SECRET_NAMES.clusterCaCert}}}
'@
$kubemixFetch = @('--noproxy', '*', '--ssl-no-revoke', '--cacert', ${q(CA_FILE)})
`
    : `$kubemixProxy = ${q(proxyOf(model))}
$kubemixFetch = @(if ($kubemixProxy -ne '') { '--proxy', $kubemixProxy })
`;
  return `$ProgressPreference = 'SilentlyContinue'
${source}${DOWNLOAD_FUNCTION}`;
}

/** One `Get-KubemixDownload` call for a matrix entry, result in `$<variable>`. */
export function fetchCall(model: ClusterModel, d: WindowsDownload, variable: string): string {
  return `$${variable} = Get-KubemixDownload -Name ${q(d.name)} -Version ${q(d.version)} -Url ${q(nodeFetchUrl(model, d.id))} -Hash ${q(sha256Ref(d.id))}`;
}

export function download(model: ClusterModel, name: string): WindowsDownload {
  const d = downloadsFor(model).find((x) => x.name === name);
  if (d === undefined) throw new Error(`no Windows download named ${name} in the matrix`);
  return d;
}
