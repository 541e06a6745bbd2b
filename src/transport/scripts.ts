// Small generated scripts the transport runs through a session: file upload
// (content on stdin, written 0600 first, then chmod/chown, then renamed into
// place) and reading a file back (secret capture).
import type { Shell } from '../model/types.js';
import { psQuote, shellQuote } from './framing.js';

export function uploadScript(shell: Shell, remotePath: string, mode: string, owner: string): string {
  if (shell === 'powershell') {
    return [
      `$dest = ${psQuote(remotePath)}`,
      '$t = "$dest.kubemix-tmp"',
      'New-Item -ItemType Directory -Force -Path (Split-Path -Parent $dest) | Out-Null',
      '$s = [Console]::OpenStandardInput(); $f = [IO.File]::Create($t); $s.CopyTo($f); $f.Close()',
      'Move-Item -Force -Path $t -Destination $dest',
    ].join('\n');
  }
  if (!/^0?[0-7]{3,4}$/.test(mode)) throw new Error(`invalid file mode ${mode}`);
  return [
    'set -e',
    `dest=${shellQuote(remotePath)}`,
    't="$dest.kubemix-tmp.$$"',
    // The session's umask is 077 (secrets); directories made for an upload are
    // read by services running as other users (named reads /etc/bind/kubemix).
    '(umask 022 && mkdir -p "$(dirname "$dest")")',
    'cat > "$t"',
    `chmod ${mode} "$t"`,
    ...(owner === '' ? [] : [`chown ${shellQuote(owner)} "$t"`]),
    'mv -f "$t" "$dest"',
  ].join('\n');
}

/** What the check-passed token's frame says: `<token> <part> <code>`. */
export const CHECK_PASSED = 0;
export const CHECK_TIMED_OUT = 1;

/**
 * Check and apply as one sh script, each part under its own timeout(1)
 * (`-k 5`: SIGKILL 5 s after the TERM, GNU coreutils timeout). Each part's
 * text reaches its `sh` on file descriptor 3 through a quoted here-document
 * (no expansion; POSIX Shell Command Language 2.7.4), never on a command line,
 * and the parts keep the script's standard input. When the check exits 0 the
 * script writes `token` framed like the session's end marker (newline, token,
 * " 0 0", newline) to stderr and exits 0; when the check timed out (124) it
 * writes " 1 124" and exits 124 without applying; otherwise the apply replaces
 * the script (exec). The caller removes the token from stderr and learns from
 * it which of these happened. The delimiter is `token` itself, unpredictable
 * to the scripts' text.
 */
export function convergeScript(
  check: string,
  apply: string,
  token: string,
  timeouts: { readonly checkSeconds: number; readonly applySeconds: number },
): string {
  const part = (seconds: number, text: string): string[] => [
    `timeout -k 5 ${wholeSeconds(seconds)} sh /dev/fd/3 3<<'${token}'`,
    text.endsWith('\n') ? text.slice(0, -1) : text,
    token,
  ];
  return [
    ...part(timeouts.checkSeconds, check),
    'rc=$?',
    `if [ $rc -eq 0 ]; then printf '\\n%s ${CHECK_PASSED} 0\\n' ${shellQuote(token)} >&2; exit 0; fi`,
    `if [ $rc -eq 124 ]; then printf '\\n%s ${CHECK_TIMED_OUT} 124\\n' ${shellQuote(token)} >&2; exit 124; fi`,
    ...part(timeouts.applySeconds, apply).map((line, i) => (i === 0 ? `exec ${line}` : line)),
  ].join('\n');
}

/** timeout(1) takes whole seconds here, as the session's frame header does; never 0 (no limit). */
function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

export function readFileScript(shell: Shell, remotePath: string): string {
  return shell === 'powershell'
    ? `[Console]::Out.Write([IO.File]::ReadAllText(${psQuote(remotePath)}))`
    : `cat ${shellQuote(remotePath)}`;
}
