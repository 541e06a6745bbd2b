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

/**
 * Check and apply as one sh script. The check runs in a subshell (its `exit`
 * ends only the check) that is not an `if` condition, where `set -e` would be
 * ignored (POSIX, Shell Command Language 2.14 `set -e`). When it exits 0 the
 * script writes `token` framed like the session's end marker (newline, token,
 * " 0 0", newline) to stderr and exits 0; otherwise the apply runs as the
 * rest of the script. The caller removes the token from stderr and learns from
 * it which of the two happened.
 */
export function convergeScript(check: string, apply: string, token: string): string {
  return [
    '(',
    check,
    ')',
    `if [ $? -eq 0 ]; then printf '\\n%s 0 0\\n' ${shellQuote(token)} >&2; exit 0; fi`,
    apply,
  ].join('\n');
}

export function readFileScript(shell: Shell, remotePath: string): string {
  return shell === 'powershell'
    ? `[Console]::Out.Write([IO.File]::ReadAllText(${psQuote(remotePath)}))`
    : `cat ${shellQuote(remotePath)}`;
}
