// The accounts a test host's sshd sees: private copies of /etc/passwd (and,
// for a non-root login user with password-less sudo, /etc/shadow, /etc/group
// and /etc/sudoers.d) bind-mounted in a mount namespace of the sshd's own, so
// the machine's real accounts are never touched. In the copy root logs in
// with /bin/sh: sshd runs every command through the login shell, and bash
// sources root's ~/.bashrc for it — on a developer machine that may run
// anything (a `pyenv rehash` waiting 60 s on a stale lock made every session
// open take 65 s), none of which a test host should depend on.
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export interface SudoUser {
  readonly name: string;
  readonly uid: number;
  readonly home: string;
}

export interface BindMount {
  readonly source: string;
  readonly target: string;
}

/** A private /etc/passwd in which root's login shell is /bin/sh; returns its bind mount. */
export function prepareRootShellEtc(root: string): BindMount[] {
  const etc = join(root, 'private-etc');
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, 'passwd'), withRootShell(readFileSync('/etc/passwd', 'utf8')));
  return [{ source: join(etc, 'passwd'), target: '/etc/passwd' }];
}

function withRootShell(passwd: string): string {
  return passwd.replace(/^(root:[^:\n]*:0:[^:\n]*:[^:\n]*:[^:\n]*:)[^\n]*$/m, '$1/bin/sh');
}

/** Writes the private /etc files under `root`; returns the bind mounts sshd needs. */
export function preparePrivateEtc(root: string, user: SudoUser): BindMount[] {
  const etc = join(root, 'private-etc');
  const sudoers = join(etc, 'sudoers.d');
  mkdirSync(sudoers, { recursive: true });
  prepareRootShellEtc(root);
  for (const file of ['shadow', 'group']) copyFileSync(`/etc/${file}`, join(etc, file));
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
export function sshdInPrivateEtc(mounts: readonly BindMount[], sshdArgs: readonly string[]): string[] {
  const binds = mounts.map((m) => `mount --bind '${m.source}' '${m.target}'`).join(' && ');
  return [
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    `${binds} && exec /usr/sbin/sshd ${sshdArgs.map((a) => `'${a}'`).join(' ')}`,
  ];
}
