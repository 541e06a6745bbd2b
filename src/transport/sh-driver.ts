// The driver of sh-shell hosts' framed sessions (wire format in framing.ts):
// a bash loop that runs each command in `sh`, in a process group of its own,
// and one watchdog process per session that bounds each command's time.
// bash is on every Linux distribution kubemix installs (Debian, Ubuntu,
// CentOS Stream: Essential/base package); the planned scripts stay POSIX sh.
import { shellQuote } from '../util/escape/index.js';

export const READY = 'KUBEMIX-READY';

/**
 * The session's watchdog (bash; `$1` the driver's pid, `$2` its directory):
 * one process per session, which bounds every command the driver starts
 * without a process per command. The driver writes "<pgid> <seconds>" to the
 * fifo `w` when a command starts and "e" when it has been reaped; the
 * watchdog answers on `r`: 0 in time, 1 killed. A command over its limit gets
 * SIGTERM to its process group, SIGKILL 5 s later if it still runs, and
 * SIGKILL to whatever is left of its group once it is gone (background
 * children included). `read -t` takes fractions of a second (bash manual,
 * "read"). "q" (the driver's exit) or the driver gone: the command running
 * then is killed, the directory removed.
 */
export const WATCHDOG = [
  'exec 5<>"$2/w" 6<>"$2/r" </dev/null >/dev/null 2>&1',
  'p="$1" d="$2" b="$3" c=""',
  'gone() { if [ -n "$c" ]; then kill -KILL -- "-$c"; fi; rm -rf "$d" "$b"; exit 0; }',
  // One line from the driver into $l within $1 seconds ('' = no limit); 1 when the time ran out.
  'line() {',
  '  while :; do',
  '    if [ -n "$1" ]; then read -r -t "$1" l <&5; else read -r -t 60 l <&5; fi; r=$?',
  '    if [ $r -eq 0 ]; then if [ "$l" = q ]; then gone; fi; return 0; fi',
  '    if [ $r -le 128 ]; then gone; fi',
  '    if [ -n "$1" ]; then return 1; fi',
  '    kill -0 "$p" || gone',
  '  done',
  '}',
  'while line ""; do',
  '  c="${l%% *}" t="${l#* }" k=0',
  '  if ! line "$t"; then',
  '    k=1; kill -TERM -- "-$c"',
  '    line 5 || { kill -KILL -- "-$c"; line ""; }',
  '    kill -KILL -- "-$c"',
  '  fi',
  `  c=""; printf '%s\\n' "$k" >&6`,
  'done',
].join('\n');

/** How long the driver waits for the watchdog's answer once a command has ended. */
export const ANSWER_SECONDS = 10;

/**
 * The sh-shell hosts' driver, run by bash (`$1` is the marker): `set -m` gives
 * each command a process group of its own (bash manual, "Job Control"), which
 * the watchdog can kill whole; the commands themselves run in `sh`. Per
 * command it starts one `sh` (two for a check that fails and its apply) and
 * nothing else, unless a script or stdin is too long for a line (`head -c`).
 */
export const SH_DRIVER = [
  'set -m',
  'umask 077',
  'm="$1"',
  // Fifos and scripts in RAM when /dev/shm is there: on a disk filesystem every fifo message and script
  // write dirties an inode the journal then writes out (and a script's secrets never reach the disk);
  // stdin, which carries uploads of any size, stays in TMPDIR.
  'b=$(mktemp -d "${TMPDIR:-/tmp}/kubemix.XXXXXXXX") || exit 70',
  'd=$(mktemp -d /dev/shm/kubemix.XXXXXXXX 2>/dev/null) || d="$b"',
  'mkfifo "$d/w" "$d/r" || exit 70',
  // Job notices ("Terminated") to /dev/null; the commands' stderr and the end markers on fd 7.
  'exec 5<>"$d/w" 6<>"$d/r" 7>&2 2>/dev/null',
  `trap 'printf "q\\n" >&5; rm -rf "$d" "$b"' EXIT`,
  "trap 'exit 129' HUP",
  "trap 'exit 143' TERM",
  'if [ "$EUID" = 0 ]; then su=""; else su="sudo -n --"; fi',
  `W=${shellQuote(WATCHDOG)}`,
  // As root when sudo allows: only root may kill a root command's process group.
  '{ if [ -n "$su" ] && sudo -n true; then exec sudo -n -- bash --norc -c "$W" kubemix-watchdog "$$" "$d" "$b"; fi',
  '  exec bash --norc -c "$W" kubemix-watchdog "$$" "$d" "$b"; } </dev/null >/dev/null 5>&- 6>&- 7>&- &',
  'w=$!',
  `printf '${READY} %s\\n' "$d"`,
  `get() { if [ "$1" = L ]; then IFS= read -r s; printf '%b' "$s" > "$2"; s=""; else head -c "$1" > "$2"; fi; }`,
  // One script in its own process group, bounded by the watchdog: $1 script, $2 seconds, $3 stdin.
  'part() {',
  '  $p sh "$1" < "$3" 2>&7 5>&- 6>&- 7>&- &',
  '  c=$!',
  `  printf '%s %s\\n' "$c" "$2" >&5`,
  '  wait "$c"; rc=$?',
  "  printf 'e\\n' >&5",
  // The watchdog answers as soon as it reads "e" (the command is reaped by then, even after a kill); no answer
  // within ANSWER_SECONDS means it died while the command ran: end the session (the client opens another).
  `  IFS= read -r -t ${ANSWER_SECONDS} k <&6 || exit 75`,
  '  if [ "$k" = 1 ]; then rc=124; fi',
  '}',
  'while IFS=" " read -r id pv il t1 s1 t2 s2; do',
  // No command runs unbounded: without its watchdog the session ends (the client opens another). While
  // sudo starts the watchdog it runs with every uid root, and a user's kill -0 then fails though the process
  // lives (EPERM, not ESRCH: the sudo test's session closed so under load): /proc says it is there.
  '  kill -0 "$w" || [ -d "/proc/$w" ] || exit 75',
  '  get "$s1" "$d/s"',
  '  if [ -n "$s2" ]; then get "$s2" "$d/a"; fi',
  '  if [ "$il" -gt 0 ]; then head -c "$il" > "$b/i"; else : > "$b/i"; fi',
  '  if [ "$pv" = root ]; then p="$su"; else p=""; fi',
  '  n=1',
  // The scripts' own time on the host, in microseconds from bash 5's EPOCHREALTIME (no process; its
  // decimal point follows the locale, so every non-digit goes); none from an older bash.
  '  s0=${EPOCHREALTIME:-}; s0=${s0//[!0-9]/}',
  '  if [ -z "$s2" ]; then part "$d/s" "$t1" "$b/i"',
  '  else',
  // The check gets no stdin (as when run apart); the apply gets the frame's.
  '    part "$d/s" "$t1" /dev/null',
  '    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then n=2; part "$d/a" "$t2" "$b/i"; fi',
  '  fi',
  // Truncate with builtins (no extra process per command): no script text lingers between commands.
  '  : > "$d/s"; : > "$d/a"; : > "$b/i"',
  '  if [ -n "$s0" ]; then h=${EPOCHREALTIME//[!0-9]/}; h=$(( (h - s0) / 1000 )); else h=-; fi',
  `  printf '\\n%s %s %s %s %s\\n' "$m" "$id" "$rc" "$n" "$h"`,
  `  printf '\\n%s %s %s %s %s\\n' "$m" "$id" "$rc" "$n" "$h" >&7`,
  'done',
].join('\n');

/**
 * Scripts up to this many escaped bytes travel on one line: bash reads a line
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

/** One script of a framed command and its own time limit. */
export interface ShPart {
  readonly script: Buffer;
  readonly timeoutMs: number;
}

/** Seconds as bash's `read -t` takes them: decimal, to the millisecond, never 0 (0 only polls). */
export function shSeconds(ms: number): string {
  return String(Math.max(1, Math.round(ms)) / 1000);
}

/**
 * One command as the sh driver reads it: one script, or a check and an
 * apply; each inline when short, else by byte length; then the stdin.
 */
export function frameShCommand(id: number, parts: readonly ShPart[], stdin: Buffer, privilege: string): Buffer {
  if (parts.length < 1 || parts.length > 2) throw new Error(`a framed command has 1 or 2 scripts, not ${parts.length}`);
  const fields: string[] = [String(id), privilege, String(stdin.length)];
  const bodies: Buffer[] = [];
  for (const part of parts) {
    const inline = inlineScript(part.script);
    fields.push(shSeconds(part.timeoutMs), inline === undefined ? String(part.script.length) : 'L');
    bodies.push(inline === undefined ? part.script : Buffer.from(`${inline}\n`, 'latin1'));
  }
  return Buffer.concat([Buffer.from(`${fields.join(' ')}\n`, 'latin1'), ...bodies, stdin]);
}

/** The command line that starts an sh session's driver (no secrets: marker and driver text only). */
export function shDriverCommand(marker: string): string {
  // exec: the login shell that sshd runs the command line in (sh -c) does not stay behind.
  return `exec bash --norc -c ${shellQuote(SH_DRIVER)} kubemix ${marker}`;
}
