// Runs rendered POSIX sh scripts the way the review of issue #31 did: every
// command that is not a shell builtin is a stub that records its argv and
// succeeds (bash's command_not_found_handle with an empty PATH), inside a
// mount namespace whose /etc, /var, /usr/local, /opt, /srv, /root, /home,
// /run and /tmp are fresh tmpfs, so a script's redirections change nothing
// on this machine. `set` is a no-op (no -e, no -u: the script runs on past a
// stub's empty answer); `exit` is real. What comes back is every stub call.
// With `nested`, a stub call `sh -c SCRIPT …` (also behind `timeout [-k N] N`,
// as diagnose runs each section) runs SCRIPT too, under the same stubs: a
// script that carries another as one quoted argument is checked all the way in.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PRELUDE = `set() { :; }
command_not_found_handle() {
  { printf '%s\\0' "$@"; printf '\\1'; } >> "$KMX_LOG"
  return 0
}
`;

// The handler exported, so the bash that runs a nested script has it (and the no-op `set`) too.
const NESTED = `command_not_found_handle() {
  { printf '%s\\0' "$@"; printf '\\1'; } >> "$KMX_LOG"
  if [ "$1" = timeout ]; then
    shift
    while [ "$#" -gt 0 ]; do case "$1" in -k | -s) shift 2 ;; -*) shift ;; *) break ;; esac; done
    shift
  fi
  if [ "$#" -ge 3 ] && [ "$1" = sh ] && [ "$2" = -c ]; then
    shift 2
    /usr/bin/bash --norc --noprofile -c "$@" </dev/null
  fi
  return 0
}
export -f set command_not_found_handle
`;

const RUNNER = `set -u
mount --make-rprivate / || exit 90
for d in /etc /var /usr/local /opt /srv /root /home /run /tmp /mnt; do mount -t tmpfs tmpfs "$d" || exit 91; done
for s in "$KMX_DIR"/*.sh; do
  KMX_LOG="$s.log" PATH="$KMX_DIR/empty" /usr/bin/timeout -k 1 3 /usr/bin/bash --norc --noprofile -c '. "$1"; . "$2"' sh "$KMX_DIR/prelude" "$s" </dev/null >/dev/null 2>&1
  echo $? > "$s.rc"
done
`;

export interface StubCall {
  readonly argv: readonly string[];
}

/** Runs each script in the sandbox; the stub calls each made, by index. */
export function runWithStubs(scripts: readonly string[], options: { readonly nested?: boolean } = {}): StubCall[][] {
  const dir = mkdtempSync('/dev/shm/kubemix-marker-');
  try {
    writeFileSync(join(dir, 'prelude'), options.nested === true ? `${PRELUDE}${NESTED}` : PRELUDE);
    scripts.forEach((s, i) => writeFileSync(join(dir, `${String(i).padStart(6, '0')}.sh`), s));
    const r = spawnSync('unshare', ['-m', 'bash', '-c', RUNNER], {
      env: { KMX_DIR: dir, PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (r.status !== 0) throw new Error(`the sandbox did not run (exit ${r.status}): ${r.stderr}`);
    return scripts.map((_, i) => {
      let log = '';
      try {
        log = readFileSync(join(dir, `${String(i).padStart(6, '0')}.sh.log`), 'utf8');
      } catch {
        /* no stub was called */
      }
      return log
        .split('\u0001')
        .filter((c) => c !== '')
        .map((c) => ({ argv: c.split('\0').slice(0, -1) }));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
