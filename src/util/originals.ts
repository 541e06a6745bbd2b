// What kubemix's uploads replaced on a Linux node, kept so `down` can give it
// back (issue #31: `down` deleted the packages' /etc/bind/named.conf and
// /etc/haproxy/haproxy.cfg that `up` had overwritten). Before the first upload
// to a path, the node records either a copy of the file that was there
// (`saved/<path>`, cp -a: bytes, mode, owner, a symlink as a symlink) or that
// nothing was (`created/<path>`, empty). Later uploads keep the first record,
// so kubemix's own earlier version never stands in for the original. `down`
// restores a saved file, removes a file kubemix created, and leaves a file it
// has no record of. The transport (upload) and the plan (down) share this
// layout, so it lives here, below both.
import { shell, type ShellText } from './escape/index.js';

/**
 * Root-only (0700), outside /etc so no package, config scan or `run-parts`
 * reads the copies, beside the services node's download cache
 * (/var/lib/kubemix/files, which must stay reachable: its parent stays 0755).
 */
export const ORIGINALS_DIR = '/var/lib/kubemix/originals';

/**
 * sh, run by the upload script before it moves its file to "$dest": records
 * what is at "$dest" unless a record exists. Copies go through a temporary
 * name, so an interrupted copy is never taken for the original.
 */
export function recordOriginalScript(dir: string = ORIGINALS_DIR): ShellText {
  return shell`o=${dir}
if [ ! -e "$o/saved$dest" ] && [ ! -L "$o/saved$dest" ] && [ ! -e "$o/created$dest" ]; then
  (umask 022 && mkdir -p "$(dirname "$o")")
  (umask 077 && mkdir -p "$o" && chmod 700 "$o")
  if [ -e "$dest" ] || [ -L "$dest" ]; then
    (umask 077 && mkdir -p "$(dirname "$o/saved$dest")" && cp -a "$dest" "$o/saved$dest.kubemix-tmp.$$")
    mv -f "$o/saved$dest.kubemix-tmp.$$" "$o/saved$dest"
  else
    (umask 077 && mkdir -p "$(dirname "$o/created$dest")" && : > "$o/created$dest")
  fi
fi`;
}

/**
 * A path in kubemix's own namespace (a directory or file named for it:
 * /etc/kubemix/…, /etc/bind/kubemix/…, kubemix-files.service) is kubemix's
 * with or without a record: nothing else writes there. Hosts deployed before
 * records existed still get those files removed on `down`.
 */
export function inKubemixNamespace(path: string): boolean {
  return path.split('/').some((part) => part.includes('kubemix'));
}

/**
 * `down`'s apply for files kubemix uploaded: give back what each replaced,
 * remove what it created, leave (and name on stderr) a file it has no record
 * of. Idempotent: a record goes only once its file is back in place.
 */
export function restoreOriginalsScript(files: readonly string[], dir: string = ORIGINALS_DIR): ShellText {
  const owned = files.filter(inKubemixNamespace);
  const others = files.filter((f) => !inKubemixNamespace(f));
  return shell`set -eu
o=${dir}
restore() {
  f=$1
  if [ -e "$o/saved$f" ] || [ -L "$o/saved$f" ]; then
    (umask 022 && mkdir -p "$(dirname "$f")")
    rm -f "$f.kubemix-restore"
    cp -a "$o/saved$f" "$f.kubemix-restore"
    mv -f "$f.kubemix-restore" "$f"
    rm -f "$o/saved$f" "$o/created$f"
    echo "restored $f: the file that was there before kubemix"
  elif [ -e "$o/created$f" ] || [ "$2" = own ]; then
    if [ -e "$f" ] || [ -L "$f" ]; then rm -f "$f"; echo "removed $f: kubemix created it"; fi
    rm -f "$o/created$f"
  elif [ -e "$f" ] || [ -L "$f" ]; then
    echo "left $f in place: kubemix has no record of what was there before it wrote it" >&2
  fi
}
for f in ${owned}; do restore "$f" own; done
for f in ${others}; do restore "$f" recorded; done`;
}

/** The check agreeing with `restoreOriginalsScript`: passes once no record and no kubemix-namespace file is left. */
export function originalsRestoredScript(files: readonly string[], dir: string = ORIGINALS_DIR): ShellText {
  const owned = files.filter(inKubemixNamespace);
  return shell`o=${dir}
for f in ${owned}; do if [ -e "$f" ] || [ -L "$f" ]; then exit 1; fi; done
for f in ${files}; do if [ -e "$o/saved$f" ] || [ -L "$o/saved$f" ] || [ -e "$o/created$f" ]; then exit 1; fi; done`;
}
