// What the two test libvirt daemons (a session one, libvirt.ts, and a system
// one in a network namespace, libvirt-system.ts) share: virsh against their
// socket, and waiting until the freshly started daemon answers.
import type { ChildProcess } from 'node:child_process';
import { sh } from './netns.js';

export function virsh(uri: string, ...args: string[]): string {
  return sh('virsh', ['-q', '-c', uri, ...args]);
}

/** Names from a `--name` listing (`list --all --name`, `net-list --all --name`), trimmed and sorted. */
export function virshNames(uri: string, ...args: string[]): string[] {
  return virsh(uri, ...args)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
}

/** Polls `virsh uri` until the daemon answers; fails with its stderr when it exits or the time is up. */
export async function waitForLibvirtd(child: ChildProcess, uri: string, log: () => string, seconds: number) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`libvirtd exited (${child.exitCode}): ${log()}`);
    try {
      virsh(uri, 'uri');
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`libvirtd did not answer at ${uri} within ${seconds} s: ${log()}`);
      await new Promise((res) => setTimeout(res, 150));
    }
  }
}
