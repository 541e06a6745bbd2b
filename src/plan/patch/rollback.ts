// What `kubemix patch` prints when a node does not come back healthy: the
// node stays cordoned, the updates the roll installed on it, and how to
// take them back out. Windows: `wusa /uninstall /kb:N /quiet /norestart`
// per KB article (learn.microsoft.com "Description of the Windows Update
// Standalone Installer"), then a reboot. Debian/Ubuntu: apt-get install of
// the versions the node had (`--allow-downgrades`; the older .deb must still
// be in a configured repository). RHEL-like: `dnf history undo last` (the
// transaction patch made). Pure: the node and the patch query's answer in,
// text out.
import { linuxDistro } from '../../matrix/index.js';
import type { PlanNode } from '../../model/types.js';
import { PATCH_RECORD } from '../../render/windows/updates.js';
import type { NodePending } from './query.js';

/** The commands that take the node's updates back out, one per line; none when nothing was to install. */
export function rollbackCommands(node: PlanNode, pending: NodePending | undefined): string[] {
  const updates = pending?.updates ?? [];
  if (node.osFamily === 'windows') {
    const kbs = [...new Set(updates.flatMap((u) => u.id.split(',')).filter((k) => /^KB\d+$/.test(k)))];
    if (kbs.length === 0)
      return pending === undefined
        ? [`Get-Content ${PATCH_RECORD}  # the KBs installed; wusa /uninstall /kb:N /quiet /norestart for each`]
        : [];
    return [...kbs.map((kb) => `wusa /uninstall /kb:${kb.slice(2)} /quiet /norestart`), 'Restart-Computer'];
  }
  if ((linuxDistro(node.os)?.family ?? 'apt') === 'dnf') return ['dnf -y history undo last'];
  // The query's title is `OLD -> NEW`; a package new to the node has no OLD and is left alone.
  const back = updates.flatMap((u) => {
    const old = /^(\S+) -> /.exec(u.title)?.[1];
    return old === undefined ? [] : [`${u.id}=${old}`];
  });
  return back.length === 0 ? [] : [`apt-get install -y --allow-downgrades ${back.join(' ')}`];
}

/** The node left cordoned: what was installed on it, how to roll back, how to put it back in service. */
export function rollbackText(node: PlanNode, pending: NodePending | undefined, installed: boolean): string {
  const uncordon = `kubectl uncordon ${node.name}`;
  if (!installed)
    return `${node.name} stays cordoned; no update was installed on it. Fix the cause and run patch again (it resumes), or ${uncordon}.`;
  const what =
    pending === undefined
      ? 'the updates this roll installed'
      : pending.updates.map((u) => `${u.id} (${u.title})`).join(', ') || 'a pending reboot only';
  const commands = rollbackCommands(node, pending);
  const undo = commands.length === 0 ? 'nothing to uninstall' : `to roll back, on ${node.name}: ${commands.join('; ')}`;
  return `${node.name} stays cordoned. Installed: ${what}; ${undo}. Then ${uncordon}, or fix the cause and run patch again (it resumes).`;
}
