// A non-root login user with password-less sudo, visible only to a test
// host's sshd: private copies of /etc/passwd, /etc/shadow, /etc/group and
// /etc/sudoers.d are bind-mounted in a mount namespace of the sshd's own, so
// the machine's real accounts are never touched.
import { chmodSync, chownSync, copyFileSync, mkdirSync, readdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SudoUser {
  readonly name: string;
  readonly uid: number;
  readonly home: string;
}

/** Writes the private /etc files under `root`; returns the bind mounts sshd needs. */
export function preparePrivateEtc(root: string, user: SudoUser): { source: string; target: string }[] {
  const etc = join(root, 'private-etc');
  const sudoers = join(etc, 'sudoers.d');
  mkdirSync(sudoers, { recursive: true });
  for (const file of ['passwd', 'shadow', 'group']) copyFileSync(`/etc/${file}`, join(etc, file));
  for (const f of readdirSync('/etc/sudoers.d')) copyFileSync(join('/etc/sudoers.d', f), join(sudoers, f));
  appendFileSync(join(etc, 'passwd'), `${user.name}:x:${user.uid}:${user.uid}:kubemix test:${user.home}:/bin/sh\n`);
  // `*` (not `!`): no password, but not a locked account that sshd would refuse.
  appendFileSync(join(etc, 'shadow'), `${user.name}:*:19000:0:99999:7:::\n`);
  appendFileSync(join(etc, 'group'), `${user.name}:x:${user.uid}:\n`);
  writeFileSync(join(sudoers, 'kubemix-test'), `${user.name} ALL=(ALL) NOPASSWD: ALL\n`);
  chmodSync(join(sudoers, 'kubemix-test'), 0o440);
  mkdirSync(user.home, { recursive: true });
  chownSync(user.home, user.uid, user.uid);
  // sshd reads AuthorizedKeysFile (the client key under `root`) as the user: let it through.
  chmodSync(root, 0o711);
  return [
    { source: join(etc, 'passwd'), target: '/etc/passwd' },
    { source: join(etc, 'shadow'), target: '/etc/shadow' },
    { source: join(etc, 'group'), target: '/etc/group' },
    { source: sudoers, target: '/etc/sudoers.d' },
  ];
}

/** The command that starts sshd in its own mount namespace with the private files mounted. */
export function sshdInPrivateEtc(mounts: readonly { source: string; target: string }[], sshdArgs: readonly string[]): string[] {
  const binds = mounts.map((m) => `mount --bind '${m.source}' '${m.target}'`).join(' && ');
  return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', `${binds} && exec /usr/sbin/sshd ${sshdArgs.map((a) => `'${a}'`).join(' ')}`];
}
