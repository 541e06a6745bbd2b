// Small generated scripts the transport runs through a session: file upload
// (content on stdin, written 0600 first, then chmod/chown, then renamed into
// place) and reading a file back (secret capture).
import type { Shell } from '../model/types.js';
import { shell, shellCode, type ShellText } from '../util/escape/index.js';
import { recordOriginalScript } from '../util/originals.js';
import { psQuote } from './framing.js';

export interface UploadScriptOptions {
  /**
   * Where the node records what this upload replaces (util/originals.ts), so
   * `down` can give it back; undefined records nothing (the deployer's own
   * files, uploads without root).
   */
  readonly originals?: string | undefined;
}

export function uploadScript(
  shellKind: Shell,
  remotePath: string,
  mode: string,
  owner: string,
  options: UploadScriptOptions = {},
): string {
  if (shellKind === 'powershell') {
    return [
      `$dest = ${psQuote(remotePath)}`,
      '$t = "$dest.kubemix-tmp"',
      'New-Item -ItemType Directory -Force -Path (Split-Path -Parent $dest) | Out-Null',
      '$s = [Console]::OpenStandardInput(); $f = [IO.File]::Create($t); $s.CopyTo($f); $f.Close()',
      'Move-Item -Force -Path $t -Destination $dest',
    ].join('\n');
  }
  if (!/^0?[0-7]{3,4}$/.test(mode)) throw new Error(`invalid file mode ${mode}`);
  const record = options.originals === undefined ? shellCode(':') : recordOriginalScript(options.originals);
  const chown: ShellText = owner === '' ? shellCode(':') : shell`chown ${owner} "$t"`;
  // The session's umask is 077 (secrets); directories made for an upload are
  // read by services running as other users (named reads /etc/bind/kubemix).
  // The record is taken after the new content is in its temporary file: an
  // upload that fails to arrive leaves no record of a file it never replaced.
  return shell`set -e
dest=${remotePath}
t="$dest.kubemix-tmp.$$"
(umask 022 && mkdir -p "$(dirname "$dest")")
cat > "$t"
chmod ${mode} "$t"
${chown}
${record}
mv -f "$t" "$dest"`.text;
}

export function readFileScript(shellKind: Shell, remotePath: string): string {
  return shellKind === 'powershell'
    ? `[Console]::Out.Write([IO.File]::ReadAllText(${psQuote(remotePath)}))`
    : shell`cat ${remotePath}`.text;
}
