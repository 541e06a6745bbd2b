// A check's exit status is its last command's. In the real-cluster tier's run
// 37 the upgrade's kubelet check was three lines without `set -e`, of which
// only the last (`systemctl is-active`) decided, so a running old kubelet
// counted as upgraded; a scan of every plan then found the same flaw in the
// Calico operator's check. Both were mended where they were; this test looks
// at the mechanism: every sh check of every bundled example's plans (up, down,
// upgrade, patch, patch --linux) is parsed by mvdan.cc/sh (gobuild/check-status)
// and no statement before the last may fail unnoticed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { kubeBinaries } from './helpers/kube-binaries.js';
import { repoPath } from './helpers/cli.js';
import { examplePlan, type TracedCommand } from './trace/run-trace.js';

const COMMANDS: readonly TracedCommand[] = ['up', 'down', 'upgrade', 'patch', 'patch --linux'];
const EXAMPLES = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

interface Finding {
  readonly id: string;
  readonly line: number;
  readonly statement: string;
}

/** What check-status says of `scripts` (id → script). */
function unguarded(scripts: ReadonlyMap<string, string>): Finding[] {
  const input = [...scripts].map(([id, script]) => JSON.stringify({ id, script })).join('\n');
  // Under setpriv, as the suite's other built binaries: the kernel ends it with the test.
  const r = spawnSync('setpriv', ['--pdeathsig=KILL', '--', kubeBinaries().checkStatus()], {
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Finding);
}

/** Every distinct sh check of the example's plans, secret references filled as the executor fills them. */
function checks(example: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const command of COMMANDS)
    for (const t of examplePlan(example, command).plan.tasks) {
      if (t.check === null || t.check.shell !== 'sh') continue;
      const script = t.check.script.replace(/\{\{secret:[a-z0-9-]+\}\}/g, 'SECRET');
      if (![...out.values()].includes(script)) out.set(`${command}: ${t.id}`, script);
    }
  return out;
}

describe('every check decides with all of its statements', () => {
  it('check-status finds what it must, and lets pass what cannot mislead', () => {
    const found = unguarded(
      new Map([
        // Run 37's kubelet check, as it was.
        [
          'three lines',
          '[ "$(kubelet --version)" = "Kubernetes v1.36.3" ]\n[ -x /usr/bin/kubectl ]\nsystemctl is-active --quiet kubelet\n',
        ],
        ['a && before the last', 'a && b\nc\n'],
        ['guarded', 'a || exit 1\n{ b; } || exit 1\nfail() { echo "$*" >&2; exit 2; }\nc || fail no\nd\n'],
        ['errexit', 'set -eu\na\nb\n'],
        [
          'flags and exits',
          'x=$(a)\ncase "$x" in y) ;; *) exit 1 ;; esac\nm=0\nfor p in 1 2; do b || m=1; done\nexit "$m"\n',
        ],
        ['an exit in a subshell', 'a || (exit 1)\nb\n'],
      ]),
    );
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.line}`),
      ['three lines:1', 'three lines:2', 'a && before the last:1', 'an exit in a subshell:1'],
    );
  });

  for (const example of EXAMPLES)
    it(`${example}: up, down, upgrade and patch checks`, () => {
      const scripts = checks(example);
      assert.ok(scripts.size > 20, `${scripts.size} checks`);
      const found = unguarded(scripts);
      assert.deepEqual(
        found.map((f) => `${f.id} line ${f.line}: ${f.statement}`),
        [],
        'a statement whose failure the check ignores: guard it (|| exit 1) or start the check with set -e',
      );
    });
});
