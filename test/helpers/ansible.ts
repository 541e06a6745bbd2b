// Debian's ansible-inventory, the reference reader of Ansible inventories.
import { execFileSync } from 'node:child_process';

/** `ansible-inventory -i FILE --list --export` as JSON. */
export function ansibleList(file: string): Record<string, unknown> {
  const out = execFileSync('ansible-inventory', ['-i', file, '--list', '--export'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ANSIBLE_LOCAL_TEMP: '/tmp', ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true' },
    timeout: 30_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

export function ansibleMissing(): string | false {
  try {
    execFileSync('ansible-inventory', ['--version'], { stdio: 'ignore', timeout: 30_000 });
    return false;
  } catch {
    return 'ansible-inventory is not installed (Debian package ansible, in scripts/apt-packages.txt)';
  }
}
