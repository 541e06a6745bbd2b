// The local-SYSTEM path: a script kubemix sends over SSH hands work that
// Windows refuses to a network-logon session (an OpenSSH session is one:
// PowerShell/Win32-OpenSSH#2083, #2310) to a one-shot scheduled task running
// as SYSTEM on the node, waits for it with a bound while relaying its
// progress, brings back its result and exit code, and unregisters it.
// Microsoft's WUA SDK lists the download, install and EULA calls as
// unavailable to remote callers ("Using WUA From a Remote Computer":
// IUpdateSession::CreateUpdateDownloader, CreateUpdateInstaller,
// IUpdate::AcceptEula); on Windows Server 2025 even the search has failed
// with E_ACCESSDENIED over SSH (mgajda83/PSWindowsUpdate#60, #65) [S].
//
// The worker's text is a here-string argument of Invoke-KubemixAsSystem, so
// the PowerShell rules can tell what runs in the SSH session from what runs
// as SYSTEM (test/windows/powershell.ts remoteSessionProblems). Its folder
// is locked to SYSTEM and Administrators before the script is written: only
// they may write what SYSTEM runs. Pure: text out.
import { WIN } from './paths.js';
import { q } from './ps.js';

/** Where each one-shot task keeps its script, progress log, result and exit code. */
export const SYSTEM_TASKS_DIR = `${WIN.kubemix}\\system-tasks`;
/** Task Scheduler folder of kubemix's one-shot tasks (the boot task lives at the root). */
export const SYSTEM_TASK_PATH = '\\kubemix\\';

/** A task that has not written its first progress line this long after its start did not start. */
export const SYSTEM_TASK_START_SECONDS = 120;

/** The files of one task: its script, progress log, result and exit code. */
export function systemTaskFiles(name: string): {
  dir: string;
  work: string;
  log: string;
  result: string;
  exit: string;
} {
  const dir = `${SYSTEM_TASKS_DIR}\\${name}`;
  return {
    dir,
    work: `${dir}\\work.ps1`,
    log: `${dir}\\progress.log`,
    result: `${dir}\\result.txt`,
    exit: `${dir}\\exit-code.txt`,
  };
}

/**
 * Invoke-KubemixAsSystem -Name N -TimeoutSeconds S [-StopOnTimeout] -Script W:
 * writes W (a whole script, systemTaskScript's) to N's folder, runs it as
 * SYSTEM in a one-shot scheduled task, relays its progress log, and returns
 * the lines it left in its result file. The same script started lately by a
 * session that dropped is waited for (or its result collected), never
 * started twice; anything else of that name is replaced. Throws
 * when the task does not start, fails (its log's last lines in the message)
 * or outlives the bound; at the bound it is stopped only with -StopOnTimeout
 * (an install should not be cut half way; the Task Scheduler's own limit,
 * twice the bound, ends it in the end).
 */
export const SYSTEM_TASK_FUNCTION = `function Invoke-KubemixAsSystem([string]$Name, [int]$TimeoutSeconds, [switch]$StopOnTimeout, [string]$Script) {
  $dir = Join-Path ${q(SYSTEM_TASKS_DIR)} $Name
  $log = Join-Path $dir 'progress.log'
  $resultFile = Join-Path $dir 'result.txt'
  $exitFile = Join-Path $dir 'exit-code.txt'
  $taskPath = ${q(SYSTEM_TASK_PATH)}
  $work = Join-Path $dir 'work.ps1'
  $task = Get-ScheduledTask -TaskName $Name -TaskPath $taskPath -ErrorAction SilentlyContinue
  # The same script, started lately by a session that dropped, still running or not yet collected: wait for it or collect it.
  $same = (Test-Path -LiteralPath $work) -and ((Get-Content -Raw -LiteralPath $work).TrimEnd() -eq $Script.TrimEnd())
  $recent = $null -ne $task -and (Get-ScheduledTaskInfo -TaskName $Name -TaskPath $taskPath).LastRunTime -gt (Get-Date).AddSeconds(-2 * $TimeoutSeconds)
  if ($same -and $recent -and ([string]$task.State -eq 'Running' -or (Test-Path -LiteralPath $exitFile))) {
    Write-Output "kubemix: the SYSTEM task $Name was started by an earlier session; waiting for its result"
  } else {
    if ($null -ne $task) { Unregister-ScheduledTask -TaskName $Name -TaskPath $taskPath -Confirm:$false }
    if (Test-Path -LiteralPath $dir) { Remove-Item -Recurse -Force -LiteralPath $dir }
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    # Only SYSTEM and Administrators may write the script SYSTEM runs.
    $acl = New-Object System.Security.AccessControl.DirectorySecurity
    $acl.SetAccessRuleProtection($true, $false)
    foreach ($sid in 'S-1-5-18', 'S-1-5-32-544') {
      $who = New-Object System.Security.Principal.SecurityIdentifier($sid)
      $acl.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule($who, 'FullControl', 'ContainerInherit, ObjectInherit', 'None', 'Allow')))
    }
    Set-Acl -LiteralPath $dir -AclObject $acl
    Set-Content -LiteralPath $work -Value $Script -Encoding UTF8
    $shell = Join-Path $env:SystemRoot 'System32\\WindowsPowerShell\\v1.0\\powershell.exe'
    $action = New-ScheduledTaskAction -Execute $shell -Argument ('-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "' + $work + '"')
    $principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
    $settings = New-ScheduledTaskSettingsSet -ExecutionTimeLimit (New-TimeSpan -Seconds (2 * $TimeoutSeconds)) -MultipleInstances IgnoreNew -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries
    Register-ScheduledTask -TaskName $Name -TaskPath $taskPath -Action $action -Principal $principal -Settings $settings -Force | Out-Null
    Start-ScheduledTask -TaskName $Name -TaskPath $taskPath
  }
  $begun = Get-Date
  $deadline = $begun.AddSeconds($TimeoutSeconds)
  $shown = 0
  while (-not (Test-Path -LiteralPath $exitFile)) {
    $lines = @(if (Test-Path -LiteralPath $log) { Get-Content -LiteralPath $log })
    for ($i = $shown; $i -lt $lines.Count; $i++) { Write-Output ('  ' + $lines[$i]) }
    $shown = $lines.Count
    $state = [string](Get-ScheduledTask -TaskName $Name -TaskPath $taskPath).State
    $last = '0x{0:X8}' -f (Get-ScheduledTaskInfo -TaskName $Name -TaskPath $taskPath).LastTaskResult
    if ($shown -eq 0 -and $state -ne 'Running' -and ((Get-Date) - $begun).TotalSeconds -gt ${SYSTEM_TASK_START_SECONDS}) {
      Unregister-ScheduledTask -TaskName $Name -TaskPath $taskPath -Confirm:$false
      throw "the SYSTEM task $Name did not start within ${SYSTEM_TASK_START_SECONDS} s (state $state, last result $last)"
    }
    if ($shown -gt 0 -and $state -ne 'Running' -and -not (Test-Path -LiteralPath $exitFile)) {
      Unregister-ScheduledTask -TaskName $Name -TaskPath $taskPath -Confirm:$false
      throw "the SYSTEM task $Name ended without a result (last result $last); its log: $log"
    }
    if ((Get-Date) -gt $deadline) {
      if ($StopOnTimeout) {
        Stop-ScheduledTask -TaskName $Name -TaskPath $taskPath
        Unregister-ScheduledTask -TaskName $Name -TaskPath $taskPath -Confirm:$false
        throw "the SYSTEM task $Name did not finish within $TimeoutSeconds s and was stopped; its log: $log"
      }
      throw "the SYSTEM task $Name is still running after $TimeoutSeconds s; it was left to finish (its log: $log)"
    }
    Start-Sleep -Seconds 5
  }
  $lines = @(if (Test-Path -LiteralPath $log) { Get-Content -LiteralPath $log })
  for ($i = $shown; $i -lt $lines.Count; $i++) { Write-Output ('  ' + $lines[$i]) }
  $code = ([string](Get-Content -Raw -LiteralPath $exitFile)).Trim()
  Unregister-ScheduledTask -TaskName $Name -TaskPath $taskPath -Confirm:$false
  if ($code -ne '0') { throw ("the SYSTEM task $Name failed: " + (@($lines | Select-Object -Last 3) -join ' | ')) }
  return @(if (Test-Path -LiteralPath $resultFile) { Get-Content -LiteralPath $resultFile })
}
`;

/**
 * The whole script the task runs: stop on errors, `$KubemixResult` (its
 * result file) and `Write-KubemixProgress`, the worker, and its exit code
 * written last (1 with the error in the log when the worker throws).
 */
export function systemTaskScript(name: string, worker: string): string {
  const f = systemTaskFiles(name);
  const body = worker
    .trimEnd()
    .split('\n')
    .map((l) => (l === '' ? '' : `  ${l}`))
    .join('\n');
  return `$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$KubemixResult = ${q(f.result)}
function Write-KubemixProgress([string]$Text) {
  Add-Content -LiteralPath ${q(f.log)} -Value ((Get-Date -Format 'HH:mm:ss') + ' ' + $Text)
}
Write-KubemixProgress 'started as SYSTEM'
try {
${body}
  Set-Content -LiteralPath ${q(f.exit)} -Value 0
} catch {
  Write-KubemixProgress ('failed: ' + $_.Exception.Message)
  Set-Content -LiteralPath ${q(f.exit)} -Value 1
}`;
}

/** Indented, so that no line of it starts or ends a definition of the SSH script (ps.ts definitionsOf). */
function hereString(text: string): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? '' : `  ${l}`))
    .join('\n');
}

/**
 * The statement that runs `worker` as SYSTEM (needs SYSTEM_TASK_FUNCTION)
 * and keeps the lines it returned in `$variable`.
 */
export function runAsSystem(
  variable: string,
  name: string,
  worker: string,
  options: { readonly timeoutSeconds: number; readonly stopOnTimeout: boolean },
): string {
  const script = systemTaskScript(name, worker);
  if (/^\s*'@/m.test(script)) throw new Error(`SYSTEM task ${name}: its script would end the here-string early`);
  return `$${variable} = Invoke-KubemixAsSystem -Name ${q(name)} -TimeoutSeconds ${options.timeoutSeconds}${options.stopOnTimeout ? ' -StopOnTimeout' : ''} -Script @'
${hereString(script)}
'@
`;
}
