// The framed remote shell. One long-lived process per session reads commands
// from the channel's stdin and runs them one after another, so a task costs a
// few bytes on an open channel instead of a new SSH channel (~150-230 ms here).
//
// Wire format, client → host, per command:
//   "<id> <scriptBytes> <stdinBytes> <privilege> <timeoutSeconds>\n" + script + stdin
// or, for a short sh script, the script on one line in printf %b escapes
// (read by the shell itself: no `head` process for it):
//   "<id> L <stdinBytes> <privilege> <timeoutSeconds>\n" + escaped script + "\n" + stdin
// host → client, on stdout and on stderr after the command's own output:
//   "\n<marker> <id> <exitCode>\n"
// The marker is a per-session random nonce given on the driver's command line
// (it is not a secret: it only has to be unpredictable to the commands' output).
// Scripts are written to 0600 files in a 0700 directory and fed their stdin
// from a file, so no script text ever reaches a command line.
import { psQuote, shellQuote } from '../util/escape/index.js';

// Re-exported: the executor's scripts quote with the same rules as planned scripts.
export { psQuote, shellQuote };

export const READY = 'KUBEMIX-READY';

/** POSIX sh driver; `$1` is the marker. Runs each command under `timeout`, stdin from its framed bytes. */
export const SH_DRIVER = [
  'umask 077',
  'm="$1"',
  'd=$(mktemp -d "${TMPDIR:-/tmp}/kubemix.XXXXXXXX") || exit 70',
  'trap \'rm -rf "$d"\' EXIT',
  "trap 'exit 129' HUP",
  "trap 'exit 143' TERM",
  'if [ "$(id -u)" = 0 ]; then su=""; else su="sudo -n --"; fi',
  `printf '${READY} %s\\n' "$d"`,
  'while IFS=" " read -r id sl il pv to; do',
  '  if [ "$sl" = L ]; then IFS= read -r s; printf \'%b\' "$s" > "$d/s"; s=""; else head -c "$sl" > "$d/s"; fi',
  '  if [ "$il" -gt 0 ]; then head -c "$il" > "$d/i"; else : > "$d/i"; fi',
  '  if [ "$pv" = root ]; then p="$su"; else p=""; fi',
  // timeout(1) puts the command in its own process group; kills it (and -k 5 later, hard) on expiry.
  '  if [ "$to" -gt 0 ]; then $p timeout -k 5 "$to" sh "$d/s" < "$d/i"; rc=$?',
  // Timeout 0: the script bounds its own parts (a folded check and apply, converge.ts). It is
  // kubemix's own wrapper, so as root it runs in a subshell: a fork, not two more programs.
  '  elif [ -n "$p" ]; then $p sh "$d/s" < "$d/i"; rc=$?',
  '  else ( . "$d/s" ) < "$d/i"; rc=$?; fi',
  // Truncate with builtins (no extra process per command): no script text lingers between commands.
  '  : > "$d/s"; : > "$d/i"',
  `  printf '\\n%s %s %s\\n' "$m" "$id" "$rc"`,
  `  printf '\\n%s %s %s\\n' "$m" "$id" "$rc" >&2`,
  'done',
].join('\n');

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
    `$m = '${marker}'`,
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
  if (shell === 'sh') return `sh -c ${shellQuote(SH_DRIVER)} kubemix ${marker}`;
  const encoded = Buffer.from(powershellDriver(marker), 'utf16le').toString('base64');
  return `powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ${encoded}`;
}

export function frameHeader(
  id: number,
  script: Buffer,
  stdin: Buffer,
  privilege: string,
  timeoutSeconds: number,
): Buffer {
  // 0 only when asked for (the script bounds itself); otherwise at least 1 s: timeout(1) reads 0 as no limit.
  const to = timeoutSeconds === 0 ? 0 : Math.max(1, Math.ceil(timeoutSeconds));
  return Buffer.from(`${id} ${script.length} ${stdin.length} ${privilege} ${to}\n`);
}

/**
 * Scripts up to this many escaped bytes travel on one line: dash reads a line
 * a byte per read(2), which costs less than starting `head` up to a few KiB.
 */
export const INLINE_SCRIPT_MAX = 2048;

/**
 * The script in printf %b escapes (POSIX printf, the %b conversion): backslash
 * doubled, newline as \n, other control bytes as \0ooo; undefined when it holds
 * a NUL byte or is too long for one line.
 */
export function inlineScript(script: Buffer): string | undefined {
  if (script.length > INLINE_SCRIPT_MAX || script.includes(0)) return undefined;
  let out = '';
  for (const byte of script) {
    if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x0a) out += '\\n';
    else if (byte < 0x20 || byte === 0x7f) out += `\\0${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  const encoded = Buffer.from(out, 'latin1');
  return encoded.length > INLINE_SCRIPT_MAX ? undefined : out;
}

/** One command as the sh driver reads it: inline when short, else by byte length. */
export function frameShCommand(
  id: number,
  script: Buffer,
  stdin: Buffer,
  privilege: string,
  timeoutSeconds: number,
): Buffer {
  const inline = inlineScript(script);
  if (inline === undefined)
    return Buffer.concat([frameHeader(id, script, stdin, privilege, timeoutSeconds), script, stdin]);
  const header = frameHeader(id, Buffer.alloc(0), stdin, privilege, timeoutSeconds).toString('latin1');
  const line = header.replace(/^(\d+) 0 /, '$1 L ');
  return Buffer.concat([Buffer.from(`${line}${inline}\n`, 'latin1'), stdin]);
}

export interface FrameEnd {
  readonly id: number;
  readonly code: number;
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
      const [id, code] = this.buffer
        .subarray(at + this.needle.length, eol)
        .toString('latin1')
        .trim()
        .split(' ');
      this.flush(at);
      this.buffer = this.buffer.subarray(eol - at + 1);
      this.onEnd({ id: Number(id), code: Number(code) });
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
