import { homedir } from 'node:os';
import { join } from 'node:path';

/** `~/x` → `$HOME/x`, as OpenSSH reads identity files; other paths unchanged. */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === '~') return home;
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}
