// What runs once, as SYSTEM, at the end of Windows Setup (SetupComplete.cmd →
// kubemix-setup.ps1): OpenSSH Server with our pre-generated host key, the
// cluster's login key for Administrators, SSH and ICMPv4 echo allowed from
// the node network only (kubemix pings every node before it installs
// anything), then a shutdown so the driver knows the install is done.
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES, sshHostKeySecret } from '../../model/secret-names.js';
import type { PlanNode } from '../../model/types.js';
import { icmpEchoRule, ruleScript } from './host.js';
import { q } from './ps.js';

const SSH_DIR = 'C:\\ProgramData\\ssh';
const OPENSSH_CAPABILITY = 'OpenSSH.Server~~~~0.0.1.0';
const SSH_RULE = 'OpenSSH-Server-In-TCP';
const POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';
/** Administrators and SYSTEM by SID: names are localised. */
const ADMINS_AND_SYSTEM = "'*S-1-5-32-544:F' '*S-1-5-18:F'";

/** SetupComplete.cmd: Windows Setup runs it as SYSTEM before the first logon screen. */
export function setupCompleteCmd(): string {
  return [
    '@echo off',
    'rem Rendered by kubemix: runs once, as SYSTEM, at the end of Windows Setup.',
    'powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -File "%WINDIR%\\Setup\\Scripts\\kubemix-setup.ps1" > "%WINDIR%\\Setup\\Scripts\\kubemix-setup.log" 2>&1',
    '',
  ].join('\r\n');
}

export function setupScript(model: ClusterModel, node: PlanNode): string {
  return `$ErrorActionPreference = 'Stop'
# Rendered by kubemix for ${node.name}. Holds secrets once the driver fills it in: it deletes itself.
${FUNCTIONS}
${openSsh()}
${hostKey(node)}
${authorizedKeys()}
${sshdConfig()}
${firewallRule(model.cluster.network.nodeCidr)}
${ruleScript(icmpEchoRule(model.cluster.network.nodeCidr))}
${finish()}`;
}

const FUNCTIONS = `function Write-KubemixFile([string]$Path, [string]$Text) {
  # OpenSSH wants LF line ends and no byte order mark.
  $body = $Text.Replace("\`r\`n", "\`n").Trim() + "\`n"
  [System.IO.File]::WriteAllText($Path, $body, [System.Text.Encoding]::ASCII)
}
function Set-KubemixPrivateAcl([string]$Path) {
  & icacls.exe $Path /inheritance:r /grant ${ADMINS_AND_SYSTEM} | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "icacls.exe $Path exited $LASTEXITCODE" }
}`;

function openSsh(): string {
  return `# OpenSSH Server (in the box on 2025, a capability on 2022), started automatically.
$capability = Get-WindowsCapability -Online -Name ${q(OPENSSH_CAPABILITY)}
if ($capability.State -ne 'Installed') { Add-WindowsCapability -Online -Name ${q(OPENSSH_CAPABILITY)} | Out-Null }
New-Item -ItemType Directory -Force -Path ${q(SSH_DIR)} | Out-Null
if (-not (Test-Path -LiteralPath 'HKLM:\\SOFTWARE\\OpenSSH')) { New-Item -Path 'HKLM:\\SOFTWARE\\OpenSSH' -Force | Out-Null }
New-ItemProperty -Path 'HKLM:\\SOFTWARE\\OpenSSH' -Name 'DefaultShell' -Value ${q(POWERSHELL)} -PropertyType String -Force | Out-Null`;
}

/** Our host key, in place before sshd first starts, so the deployer knows it before first contact. */
function hostKey(node: PlanNode): string {
  const path = `${SSH_DIR}\\ssh_host_ed25519_key`;
  return `$hostKey = @'
{{secret:${sshHostKeySecret(node.name)}}}
'@
Write-KubemixFile -Path ${q(path)} -Text $hostKey
Set-KubemixPrivateAcl -Path ${q(path)}
$publicKey = & "$env:WINDIR\\System32\\OpenSSH\\ssh-keygen.exe" -y -f ${q(path)}
if ($LASTEXITCODE -ne 0) { throw "ssh-keygen.exe could not read the host key ($LASTEXITCODE)" }
Write-KubemixFile -Path ${q(`${path}.pub`)} -Text ([string]$publicKey)`;
}

/** The cluster's login key for Administrators; sshd ignores the file unless only Administrators and SYSTEM can touch it. */
function authorizedKeys(): string {
  const path = `${SSH_DIR}\\administrators_authorized_keys`;
  return `$authorizedKeys = @'
{{secret:${SECRET_NAMES.clusterSshPublicKey}}}
'@
Write-KubemixFile -Path ${q(path)} -Text $authorizedKeys
Set-KubemixPrivateAcl -Path ${q(path)}`;
}

/**
 * sshd offers only our host key and takes keys only (the Administrator
 * password is for the console). The default config's Match block for
 * administrators_authorized_keys stays as it is.
 */
function sshdConfig(): string {
  const config = `${SSH_DIR}\\sshd_config`;
  return `if (-not (Test-Path -LiteralPath ${q(config)})) {
  Copy-Item -LiteralPath "$env:WINDIR\\System32\\OpenSSH\\sshd_config_default" -Destination ${q(config)}
}
$kept = @(Get-Content -LiteralPath ${q(config)} | Where-Object { $_ -notmatch '^\\s*(HostKey|PasswordAuthentication)\\s' })
$ours = @('# kubemix: the pre-generated host key only; keys only', 'HostKey __PROGRAMDATA__/ssh/ssh_host_ed25519_key', 'PasswordAuthentication no')
Set-Content -LiteralPath ${q(config)} -Value ($ours + $kept) -Encoding ascii
Set-Service -Name 'sshd' -StartupType Automatic
Start-Service -Name 'sshd'`;
}

/** Port 22 from the node network only (the capability's own rule allows any address). */
function firewallRule(nodeCidr: string): string {
  return `if ($null -eq (Get-NetFirewallRule -Name ${q(SSH_RULE)} -ErrorAction SilentlyContinue)) {
  New-NetFirewallRule -Name ${q(SSH_RULE)} -DisplayName 'OpenSSH Server (sshd)' -Direction Inbound -Protocol TCP -LocalPort 22 -Action Allow | Out-Null
}
Set-NetFirewallRule -Name ${q(SSH_RULE)} -RemoteAddress ${q(nodeCidr)} -Profile Any -Enabled True`;
}

/**
 * Passwords in the copies Setup keeps, the secrets in this script: gone.
 * The shutdown tells the driver the install finished; a failure above
 * leaves the VM running with the log beside this script.
 */
function finish(): string {
  return `Get-LocalUser | Where-Object { $_.SID.Value -like 'S-1-5-21-*-500' } | Set-LocalUser -PasswordNeverExpires $true
foreach ($cached in 'C:\\Windows\\Panther\\unattend.xml', 'C:\\Windows\\Panther\\Unattend\\unattend.xml') {
  if (Test-Path -LiteralPath $cached) { Remove-Item -LiteralPath $cached -Force }
}
Remove-Item -LiteralPath $PSCommandPath -Force
& shutdown.exe /s /t 30 /d p:4:2 /c 'kubemix: unattended setup finished'
if ($LASTEXITCODE -ne 0) { throw "shutdown.exe exited $LASTEXITCODE" }
`;
}
