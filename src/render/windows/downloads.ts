// Downloads on a Windows worker: through the spec's proxy and artifact
// mirror, cached per version under C:\k\cache, installed only after the
// SHA256 matches (a published checksum file or a hash pinned in the matrix).
import { windowsDownloads, type WindowsDownload } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { WIN } from './paths.js';
import { q } from './ps.js';

/** `https://host/path` → `<mirror>/host/path` when the spec names an artifact mirror. */
export function mirrored(url: string, mirror: string | undefined): string {
  if (mirror === undefined) return url;
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${u.host}${u.pathname}`;
}

export function downloadsFor(model: ClusterModel): WindowsDownload[] {
  return windowsDownloads(model.versions.kubernetes, model.versions.containerd);
}

/** The proxy a node downloads through (HTTPS first: every origin is HTTPS). */
export function proxyOf(model: ClusterModel): string {
  return model.spec.proxy?.https ?? model.spec.proxy?.http ?? '';
}

/** Defines `Get-KubemixDownload`; returns the verified file's path in the cache. */
export function downloadFunction(model: ClusterModel): string {
  return `$ProgressPreference = 'SilentlyContinue'
[Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12
$kubemixProxy = ${q(proxyOf(model))}
function Invoke-KubemixFetch([string]$Uri, [string]$OutFile) {
  $fetch = @{ Uri = $Uri; OutFile = $OutFile; UseBasicParsing = $true }
  if ($kubemixProxy -ne '') { $fetch.Proxy = $kubemixProxy }
  Invoke-WebRequest @fetch
}
function Get-KubemixDownload([string]$Name, [string]$Version, [string]$Url, [string]$ChecksumUrl, [string]$Hash) {
  $dir = Join-Path ${q(WIN.cache)} $Version
  New-Item -ItemType Directory -Force -Path $dir | Out-Null
  $file = Join-Path $dir $Name
  if ($ChecksumUrl -ne '') {
    $sumFile = "$file.sha256"
    if (-not (Test-Path -LiteralPath $sumFile)) { Invoke-KubemixFetch -Uri $ChecksumUrl -OutFile $sumFile }
    $Hash = ((Get-Content -Raw -LiteralPath $sumFile).Trim() -split '\\s+')[0]
  }
  if ($Hash -notmatch '^[0-9a-fA-F]{64}$') {
    throw "kubemix has no verified SHA256 for $Name $Version and refuses to install it; record the hash in the compatibility matrix"
  }
  if ((Test-Path -LiteralPath $file) -and (Get-FileHash -Algorithm SHA256 -LiteralPath $file).Hash -eq $Hash) { return $file }
  $partial = "$file.partial"
  Invoke-KubemixFetch -Uri $Url -OutFile $partial
  $actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $partial).Hash
  if ($actual -ne $Hash) {
    Remove-Item -Force -LiteralPath $partial
    throw "SHA256 mismatch for $Name from $Url (got $actual, want $Hash)"
  }
  Move-Item -Force -LiteralPath $partial -Destination $file
  return $file
}
`;
}

/** One `Get-KubemixDownload` call for a matrix entry, result in `$<variable>`. */
export function fetchCall(model: ClusterModel, d: WindowsDownload, variable: string): string {
  const mirror = model.spec.mirrors.artifacts;
  const sumUrl = d.checksum.kind === 'sidecar' ? mirrored(d.checksum.url, mirror) : '';
  const pinned = d.checksum.kind === 'pinned' ? (d.checksum.sha256 ?? '') : '';
  return `$${variable} = Get-KubemixDownload -Name ${q(d.name)} -Version ${q(d.version)} -Url ${q(mirrored(d.url, mirror))} -ChecksumUrl ${q(sumUrl)} -Hash ${q(pinned)}`;
}

export function download(model: ClusterModel, name: string): WindowsDownload {
  const d = downloadsFor(model).find((x) => x.name === name);
  if (d === undefined) throw new Error(`no Windows download named ${name} in the matrix`);
  return d;
}
