// The script that lists, on one node, every credential its Kubernetes
// components run with and how long each has left: the kubelet's client and
// serving certificates, every projected ServiceAccount token the kubelet keeps
// for its pods (named by the pod's log directory, <namespace>_<pod>_<uid>),
// Calico's CNI token (calico-kubeconfig), tokens an earlier kubemix minted for
// the Windows services and, on control planes, kubeadm's certificates and
// kubeconfigs. It prints one line per credential,
//   KUBEMIX-PROBE credential <kind> <name> <lifetime s> <remaining s>
// (the times from the certificate's notBefore/notAfter or the token's iat/exp
// claims, the remaining time against the node's own clock, which the clock
// probe checks), then `KUBEMIX-PROBE credentials <count>`. Only times are
// printed: never a token, a key or a certificate. Used by verify (the
// credentials probe) and diagnose (the credentials section). Pure text.
// Linux: openssl(1) and GNU date for certificates, base64(1) for tokens.
// Windows: .NET only (X509Certificate2, Convert, ConvertFrom-Json).
import { WIN } from '../../render/windows/paths.js';
import { q, qList } from '../../render/windows/ps.js';
import { shell, shellCode } from '../../util/escape/index.js';
import { MARK, type ProbeCommand } from './scripts.js';

/** What a credential is, for the judgement and its advice (credentials.ts). */
export type CredentialKind =
  'kubelet-client' | 'kubelet-serving' | 'kubeadm-cert' | 'pod-token' | 'cni-token' | 'legacy-token';

const CALICO_KUBECONFIG = 'calico-kubeconfig';

/** kubeadm's kubeconfigs with an embedded client certificate (kubelet.conf points at the rotated pem instead). */
const KUBEADM_KUBECONFIGS = ['admin.conf', 'super-admin.conf', 'controller-manager.conf', 'scheduler.conf'] as const;

export function linuxCredentials(controlPlane: boolean): ProbeCommand {
  const kubeadm = controlPlane
    ? shell`for c in /etc/kubernetes/pki/*.crt /etc/kubernetes/pki/etcd/*.crt; do
  [ -f "$c" ] && pem kubeadm-cert "\${c#/etc/kubernetes/pki/}" "$(cat "$c")"
done
for k in ${KUBEADM_KUBECONFIGS}; do
  f=/etc/kubernetes/$k
  [ -f "$f" ] || continue
  data=$(sed -n 's/^[[:space:]]*client-certificate-data:[[:space:]]*//p' "$f" | head -n 1)
  [ -n "$data" ] && pem kubeadm-cert "$k" "$(printf '%s' "$data" | base64 -d 2>/dev/null)"
done
`
    : shellCode('');
  const script = shell`now=$(date +%s)
n=0
say() { n=$((n + 1)); echo "${MARK} credential $1 $2 $(($4 - $3)) $(($4 - now))"; }
unread() { echo "${MARK} credential-unread $1 $2"; }
# A PEM certificate (the text): its notBefore and notAfter (GNU date reads openssl's dates).
pem() {
  if ! command -v openssl >/dev/null 2>&1; then unread "$2" openssl-missing; return 0; fi
  dates=$(printf '%s\\n' "$3" | openssl x509 -noout -startdate -enddate 2>/dev/null)
  nb=$(printf '%s\\n' "$dates" | sed -n 's/^notBefore=//p')
  na=$(printf '%s\\n' "$dates" | sed -n 's/^notAfter=//p')
  if t0=$(date -d "$nb" +%s 2>/dev/null) && t1=$(date -d "$na" +%s 2>/dev/null); then say "$1" "$2" "$t0" "$t1"; else unread "$2" unparsable; fi
}
# A JWT: its iat and exp claims (the payload, base64url without padding).
jwt() {
  p=$(printf '%s' "$3" | tr -d ' \\r\\n' | cut -d. -f2 | tr '_-' '/+')
  case $((\${#p} % 4)) in 2) p="$p==" ;; 3) p="$p=" ;; esac
  claims=$(printf '%s' "$p" | base64 -d 2>/dev/null)
  iat=$(printf '%s' "$claims" | sed -n 's/.*"iat":\\([0-9][0-9]*\\).*/\\1/p')
  exp=$(printf '%s' "$claims" | sed -n 's/.*"exp":\\([0-9][0-9]*\\).*/\\1/p')
  if [ -n "$iat" ] && [ -n "$exp" ]; then say "$1" "$2" "$iat" "$exp"; else unread "$2" unparsable; fi
}
# namespace/pod of a pod UID, from the kubelet's log directory <namespace>_<pod>_<uid>.
podname() {
  for d in /var/log/pods/*_"$1"; do
    [ -d "$d" ] || continue
    b=$(basename "$d"); b=\${b%_"$1"}; echo "\${b%%_*}/\${b#*_}"; return 0
  done
  echo "$1"
}
for c in kubelet-client-current.pem:kubelet-client kubelet.crt:kubelet-serving; do
  f=/var/lib/kubelet/pki/\${c%%:*}
  [ -f "$f" ] && pem "\${c#*:}" "\${c%%:*}" "$(cat "$f")"
done
${kubeadm}for t in /var/lib/kubelet/pods/*/volumes/kubernetes.io~projected/*/token; do
  [ -f "$t" ] || continue
  vol=$(basename "$(dirname "$t")")
  uid=$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$t")")")")")
  jwt pod-token "$(podname "$uid")/$vol" "$(cat "$t")"
done
f=/etc/cni/net.d/${CALICO_KUBECONFIG}
if [ -f "$f" ]; then
  jwt cni-token ${CALICO_KUBECONFIG} "$(sed -n 's/^[[:space:]]*token:[[:space:]]*//p' "$f" | tr -d '"' | head -n 1)"
fi
echo "${MARK} credentials $n"
`;
  return {
    script: script.text,
    command: 'list the credentials on the node and their expiry (kubelet pki, pod tokens, kubeadm pki)',
  };
}

/**
 * The service-mode tokens earlier kubemix versions placed on Windows nodes
 * (retire.ts removes them): kube-proxy's with either CNI, flanneld's only
 * where flannel is the CNI (a Calico node never had one).
 */
function legacyTokens(flannel: boolean): [string, string][] {
  return [
    ['kube-proxy-token', WIN.kubeProxyToken],
    ...(flannel ? [['flanneld-token', WIN.flanneldToken] as [string, string]] : []),
  ];
}

export function windowsCredentials(flannel: boolean): ProbeCommand {
  const script = `$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$now = [DateTimeOffset]::UtcNow.ToUnixTimeSeconds()
$script:count = 0
function Write-KubemixCredential([string]$Kind, [string]$Name, [long]$From, [long]$Until) {
  $script:count += 1
  Write-Output ('${MARK} credential ' + $Kind + ' ' + $Name + ' ' + ($Until - $From) + ' ' + ($Until - $now))
}
function Write-KubemixUnread([string]$Name, [string]$Why) {
  Write-Output ('${MARK} credential-unread ' + $Name + ' ' + ($Why -replace '\\s+', '-'))
}
# The first certificate of a PEM file: its NotBefore and NotAfter.
function Read-KubemixCertificate([string]$Kind, [string]$Name, [string]$Path) {
  if (-not (Test-Path -LiteralPath $Path)) { return }
  try {
    $text = Get-Content -LiteralPath $Path -Raw
    $body = [regex]::Match($text, '-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\\s]+)-----END CERTIFICATE-----').Groups[1].Value
    $cert = [System.Security.Cryptography.X509Certificates.X509Certificate2]::new([Convert]::FromBase64String(($body -replace '\\s', '')))
    Write-KubemixCredential $Kind $Name ([DateTimeOffset]$cert.NotBefore).ToUnixTimeSeconds() ([DateTimeOffset]$cert.NotAfter).ToUnixTimeSeconds()
  } catch {
    Write-KubemixUnread $Name $_.Exception.Message
  }
}
# A JWT: its iat and exp claims (the payload, base64url without padding).
function Read-KubemixToken([string]$Kind, [string]$Name, [string]$Token) {
  try {
    $part = $Token.Trim().Split('.')[1].Replace('-', '+').Replace('_', '/')
    switch ($part.Length % 4) { 2 { $part += '==' } 3 { $part += '=' } }
    $claims = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($part)) | ConvertFrom-Json
    Write-KubemixCredential $Kind $Name ([long]$claims.iat) ([long]$claims.exp)
  } catch {
    Write-KubemixUnread $Name $_.Exception.Message
  }
}
Read-KubemixCertificate 'kubelet-client' 'kubelet-client-current.pem' ${q(`${WIN.kubeletCertDir}\\kubelet-client-current.pem`)}
Read-KubemixCertificate 'kubelet-serving' 'kubelet.crt' ${q(`${WIN.kubeletCertDir}\\kubelet.crt`)}
# Every projected token the kubelet keeps: pods\\<uid>\\volumes\\kubernetes.io~projected\\<volume>\\token.
Get-ChildItem -Path ${q(`${WIN.kubeletDir}\\pods\\*\\volumes\\kubernetes.io~projected\\*\\token`)} -ErrorAction SilentlyContinue | ForEach-Object {
  $volumeDir = Split-Path -Parent $_.FullName
  $uid = Split-Path -Leaf (Split-Path -Parent (Split-Path -Parent (Split-Path -Parent $volumeDir)))
  $pod = $uid
  $logDir = Get-ChildItem -LiteralPath ${q(`${WIN.logs}\\pods`)} -Directory -Filter ('*_' + $uid) -ErrorAction SilentlyContinue | Select-Object -First 1
  if ($logDir) { $ns, $rest = $logDir.Name.Substring(0, $logDir.Name.Length - $uid.Length - 1).Split('_', 2); $pod = $ns + '/' + $rest }
  Read-KubemixToken 'pod-token' ($pod + '/' + (Split-Path -Leaf $volumeDir)) (Get-Content -LiteralPath $_.FullName -Raw)
}
$cni = ${q(`${WIN.cniConfDir}\\${CALICO_KUBECONFIG}`)}
if (Test-Path -LiteralPath $cni) {
  $line = Get-Content -LiteralPath $cni | Where-Object { $_ -match '^\\s*token:' } | Select-Object -First 1
  Read-KubemixToken 'cni-token' ${q(CALICO_KUBECONFIG)} (($line -replace '^\\s*token:\\s*', '') -replace '"', '')
}
foreach ($legacy in ${qList(legacyTokens(flannel).map(([name, path]) => `${name}=${path}`))}) {
  $name, $path = $legacy.Split('=', 2)
  if (Test-Path -LiteralPath $path) { Read-KubemixToken 'legacy-token' $name (Get-Content -LiteralPath $path -Raw) }
}
Write-Output ('${MARK} credentials ' + $script:count)
`;
  return {
    script,
    command: 'list the credentials on the node and their expiry (kubelet pki, pod tokens, legacy service tokens)',
  };
}
