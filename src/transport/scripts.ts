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

export function readFileScript(shell: Shell, remotePath: string): string {
  return shell === 'powershell'
    ? `[Console]::Out.Write([IO.File]::ReadAllText(${psQuote(remotePath)}))`
    : `cat ${shellQuote(remotePath)}`;
}
