// The framed remote shell. One long-lived process per session reads commands
// from the channel's stdin and runs them one after another, so a task costs a
// few bytes on an open channel instead of a new SSH channel (~150-230 ms here).
//
// Wire format of the sh driver, client → host, per command:
//   "<id> <privilege> <stdinBytes> <seconds> <script> [<seconds> <script>]\n" + scripts + stdin
// where each <script> is a byte count (its bytes follow) or `L` (a short script
// on one line in printf %b escapes, read by the shell itself: no `head` process).
// Two scripts are a check and an apply: the apply runs only when the check
// exits neither 0 nor timed out, each under its own time limit.
// host → client, on stdout and on stderr after the command's own output:
//   "\n<marker> <id> <exitCode> <part> <hostMs>\n"   (part: which script gave the exit code, 1 or 2;
//   hostMs: how long its scripts ran on the host, by bash 5's clock, or `-` from an older bash)
// The marker is a per-session random nonce given on the driver's command line
// (it is not a secret: it only has to be unpredictable to the commands' output).
// Scripts are written to 0600 files in a 0700 directory and fed their stdin
// from a file, so no script text ever reaches a command line.
// The PowerShell driver reads the older header "<id> <scriptBytes> <stdinBytes>
// <privilege> <seconds>" and ends with "<marker> <id> <exitCode>" (part 1).
import { psQuote, shellQuote } from '../util/escape/index.js';
import { READY, shDriverCommand } from './sh-driver.js';

// Re-exported: the executor's scripts quote with the same rules as planned scripts.
export { psQuote, shellQuote };
export { READY };

/**
 * PowerShell driver for Windows hosts (OpenSSH with PowerShell as the shell).
 * NOT executed here: no Windows host is available; only its text is tested.
 * Each script runs in a child powershell.exe that inherits our stdout/stderr
 * (so output streams) and gets its stdin from the framed bytes.
 */
export function powershellDriver(marker: string): string {
  return [
    "$ErrorActionPreference = 'Stop'",
    "$ProgressPreference = 'SilentlyContinue'",
    `$m = ${psQuote(marker)}`,
    "$d = Join-Path $env:TEMP ('kubemix.' + [guid]::NewGuid().ToString('N'))",
    'New-Item -ItemType Directory -Path $d | Out-Null',
    '$in = [Console]::OpenStandardInput()',
    'function Read-Exact([int]$n) {',
    '  $buf = New-Object byte[] $n; $o = 0',
    '  while ($o -lt $n) { $r = $in.Read($buf, $o, $n - $o); if ($r -le 0) { return $null }; $o += $r }',
    '  return ,$buf',
    '}',
    'function Read-Header {',
    '  $sb = New-Object System.Text.StringBuilder',
    '  while ($true) { $b = $in.ReadByte(); if ($b -lt 0) { return $null }; if ($b -eq 10) { break }; [void]$sb.Append([char]$b) }',
    '  return $sb.ToString()',
    '}',
    `[Console]::Out.Write("${READY} $d\`n"); [Console]::Out.Flush()`,
    'try {',
    '  while ($true) {',
    '    $h = Read-Header; if ($null -eq $h) { break }',
    "    $id, $sl, $il, $pv, $to = $h.Split(' ')",
    '    $s = Read-Exact ([int]$sl); $i = Read-Exact ([int]$il)',
    '    if ($null -eq $s -or $null -eq $i) { break }',
    "    $sf = Join-Path $d 's.ps1'",
    '    [IO.File]::WriteAllBytes($sf, $s)',
    '    $psi = New-Object System.Diagnostics.ProcessStartInfo',
    "    $psi.FileName = 'powershell.exe'",
    "    $psi.Arguments = '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File \"' + $sf + '\"'",
    '    $psi.UseShellExecute = $false',
    '    $psi.RedirectStandardInput = $true',
    '    $p = [System.Diagnostics.Process]::Start($psi)',
    '    $p.StandardInput.BaseStream.Write($i, 0, $i.Length); $p.StandardInput.Close()',
    '    if ($p.WaitForExit([int]$to * 1000)) { $rc = $p.ExitCode } else { & taskkill.exe /T /F /PID $p.Id | Out-Null; $rc = 124 }',
    '    Remove-Item -Force $sf',
    '    [Console]::Out.Write("`n$m $id $rc`n"); [Console]::Out.Flush()',
    '    [Console]::Error.Write("`n$m $id $rc`n"); [Console]::Error.Flush()',
    '  }',
    '} finally { Remove-Item -Recurse -Force $d }',
  ].join('\n');
}

/** The command line that starts a session's driver (no secrets: marker and driver text only). */
export function driverCommand(shell: 'sh' | 'powershell', marker: string): string {
  if (shell === 'sh') return shDriverCommand(marker);
  const encoded = Buffer.from(powershellDriver(marker), 'utf16le').toString('base64');
  return `powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ${encoded}`;
}

/** The PowerShell driver's header (it reads whole seconds, at least 1). */
export function frameHeader(
  id: number,
  script: Buffer,
  stdin: Buffer,
  privilege: string,
  timeoutSeconds: number,
): Buffer {
  const to = Math.max(1, Math.ceil(timeoutSeconds));
  return Buffer.from(`${id} ${script.length} ${stdin.length} ${privilege} ${to}\n`);
}

export interface FrameEnd {
  readonly id: number;
  readonly code: number;
  /** Which of the command's scripts gave the code: 2 when a check failed and its apply ran. */
  readonly part: number;
  /** The scripts' own time on the host, when its driver reports one. */
  readonly hostMs?: number;
}

/**
 * Splits one stream of a session into command output and end-of-command
 * frames. Holds back only as many bytes as could be the start of a marker.
 */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly needle: Buffer;

  constructor(
    marker: string,
    private readonly onData: (chunk: Buffer) => void,
    private readonly onEnd: (end: FrameEnd) => void,
  ) {
    this.needle = Buffer.from(`\n${marker} `);
  }

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const at = this.buffer.indexOf(this.needle);
      if (at < 0) {
        this.flush(this.heldBackFrom());
        return;
      }
      const eol = this.buffer.indexOf(10, at + this.needle.length);
      if (eol < 0) {
        this.flush(at);
        return;
      }
      const [id, code, part, host] = this.buffer
        .subarray(at + this.needle.length, eol)
        .toString('latin1')
        .trim()
        .split(' ');
      this.flush(at);
      this.buffer = this.buffer.subarray(eol - at + 1);
      const hostMs = host !== undefined && /^\d+$/.test(host) ? Number(host) : undefined;
      this.onEnd({
        id: Number(id),
        code: Number(code),
        part: part === '2' ? 2 : 1,
        ...(hostMs === undefined ? {} : { hostMs }),
      });
    }
  }

  /** Passes on what was held back (the stream ended without a marker there). */
  finish(): void {
    this.flush(this.buffer.length);
  }

  /**
   * Where the longest tail that could begin a marker starts: everything before
   * it is output now, so a command's progress ("listening") reaches the caller
   * while the command still runs.
   */
  private heldBackFrom(): number {
    for (let i = Math.max(0, this.buffer.length - this.needle.length + 1); i < this.buffer.length; i++) {
      const tail = this.buffer.subarray(i);
      if (tail.equals(this.needle.subarray(0, tail.length))) return i;
    }
    return this.buffer.length;
  }

  private flush(upTo: number): void {
    if (upTo <= 0) return;
    this.onData(this.buffer.subarray(0, upTo));
    this.buffer = this.buffer.subarray(upTo);
  }
}
