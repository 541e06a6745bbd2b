// PowerShell building blocks shared by the Windows scripts. Every value from
// the model is emitted as a single-quoted literal through `q`, so nothing in
// a spec can become code.
import { psList, psQuote } from '../../util/escape/index.js';

/** A single-quoted PowerShell string literal (every PowerShell single-quote character doubled). */
export const q = psQuote;

/** A PowerShell array literal of single-quoted strings. */
export const qList = psList;

/**
 * The HNS v1 API of the in-box vmcompute.dll, the same entry point Microsoft's
 * own tooling wraps, so no helper module is downloaded. Returns the parsed
 * `Output` of a call, or throws HNS's error.
 */
export const HNS_FUNCTIONS = `if (-not ('KubemixHns' -as [type])) {
Add-Type -TypeDefinition @'
using System.Runtime.InteropServices;
public static class KubemixHns {
    [DllImport("vmcompute.dll")]
    public static extern void HNSCall([MarshalAs(UnmanagedType.LPWStr)] string method, [MarshalAs(UnmanagedType.LPWStr)] string path, [MarshalAs(UnmanagedType.LPWStr)] string request, [MarshalAs(UnmanagedType.LPWStr)] out string response);
}
'@
}
function Invoke-KubemixHns([string]$Method, [string]$Path, [string]$Request = '') {
  $response = ''
  [KubemixHns]::HNSCall($Method, $Path, $Request, [ref]$response)
  $result = $response | ConvertFrom-Json
  if (-not $result.Success) { throw "HNS $Method $Path failed: $($result.Error)" }
  return $result.Output
}
function Get-KubemixHnsNetwork([string]$Name) {
  return @(Invoke-KubemixHns -Method 'GET' -Path '/networks/') | Where-Object { $_.Name -eq $Name } | Select-Object -First 1
}
`;

/** Stop a service if it exists and wait for it; a no-op otherwise. */
export const SERVICE_FUNCTIONS = `function Stop-KubemixService([string]$Name) {
  $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
  if ($null -ne $svc -and $svc.Status -ne 'Stopped') {
    Stop-Service -Name $Name -Force
    $svc.WaitForStatus('Stopped', [TimeSpan]::FromSeconds(60))
  }
}
function Set-KubemixRestart([string]$Name, [bool]$Enabled) {
  # failureflag 1: a non-zero exit counts as a failure too, not only a crash.
  if ($Enabled) {
    & sc.exe failure $Name reset= 86400 actions= restart/10000/restart/10000/restart/30000 | Out-Null
  } else {
    & sc.exe failure $Name reset= 0 actions= none/0/none/0/none/0 | Out-Null
  }
  if ($LASTEXITCODE -ne 0) { throw "sc.exe failure $Name exited $LASTEXITCODE" }
  & sc.exe failureflag $Name 1 | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe failureflag $Name exited $LASTEXITCODE" }
}
function Set-KubemixServiceEnvironment([string]$Name, [string[]]$Values) {
  $key = "HKLM:\\SYSTEM\\CurrentControlSet\\Services\\$Name"
  New-ItemProperty -Path $key -Name 'Environment' -PropertyType MultiString -Value $Values -Force | Out-Null
}
`;

/** Owner-only ACL: SYSTEM and Administrators (by SID, so any UI language works). */
export const ACL_FUNCTIONS = `function Set-KubemixPrivateAcl([string]$Path) {
  $acl = New-Object System.Security.AccessControl.FileSecurity
  $acl.SetAccessRuleProtection($true, $false)
  foreach ($sid in 'S-1-5-18', 'S-1-5-32-544') {
    $who = New-Object System.Security.Principal.SecurityIdentifier($sid)
    $acl.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule($who, 'FullControl', 'Allow')))
  }
  Set-Acl -LiteralPath $Path -AclObject $acl
}
`;
