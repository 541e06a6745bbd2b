// What a Linux cluster node's reset gives back (issue #31): the files `up`
// uploaded there — containerd's config.toml and unit, the kubelet's unit and
// drop-in, host prep's sysctl and module lists, kubeadm's configuration — as
// the node's records say they were before (util/originals.ts). The unit files
// need systemd's part around the restore. Pure: scripts and paths.
import type { ClusterModel } from '../model/resolve.js';
import { shell, shellLines, type ShellText } from '../util/escape/index.js';
import { ORIGINALS_DIR, restoreOriginalsScript } from '../util/originals.js';
import { CONTRIBUTORS } from './assemble.js';

/**
 * Each node's uploaded paths in the deploy plan, sorted: what its reset gives back. Every
 * contributor of the deploy plan is asked, so a new upload is given back without a list to keep.
 */
export function nodeUploads(model: ClusterModel): Map<string, string[]> {
  const byNode = new Map<string, Set<string>>();
  for (const contribute of CONTRIBUTORS)
    for (const a of contribute(model).artifacts ?? []) {
      const paths = byNode.get(a.node) ?? new Set<string>();
      byNode.set(a.node, paths.add(a.remotePath));
    }
  return new Map([...byNode].map(([node, paths]) => [node, [...paths].sort()]));
}

/**
 * systemd units among the uploads (containerd.service, kubelet.service). One kubemix created is
 * disabled and stopped before its file goes, so no dangling `wants` link is left; a unit file it
 * replaced comes back, and containerd restarts if it runs, to read the config.toml given back.
 */
const unitFiles = (files: readonly string[]): string[] =>
  files.filter((f) => /(^|\/)etc\/systemd\/system\/[^/]+\.service$/.test(f));

function unitsBeforeRestore(files: readonly string[], dir: string): ShellText {
  const units = unitFiles(files);
  return shell`o=${dir}
for u in ${units}; do
  if [ -e "$o/created$u" ]; then systemctl disable --now "$(basename "$u")" 2>/dev/null || true; fi
done`;
}

function unitsAfterRestore(files: readonly string[]): ShellText {
  const units = unitFiles(files).map((f) => f.slice(f.lastIndexOf('/') + 1));
  return shell`systemctl daemon-reload
systemctl try-restart containerd 2>/dev/null || true
for n in ${units}; do
  if ! systemctl is-enabled --quiet "$n" 2>/dev/null && systemctl cat "$n" >/dev/null 2>&1; then
    echo "$n: the unit kubemix replaced is back, disabled; systemctl enable --now $n if it ran before"
  fi
done`;
}

/**
 * After `kubeadm reset`: created units disabled and stopped, every upload
 * restored or removed (or left and named, without a record), systemd
 * reloaded. `dir` is the records' directory (a test's stand-in root).
 */
export function nodeRestoreScript(files: readonly string[], dir: string = ORIGINALS_DIR): ShellText {
  return shellLines([unitsBeforeRestore(files, dir), restoreOriginalsScript(files, dir), unitsAfterRestore(files)]);
}
