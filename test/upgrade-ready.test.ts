// The upgrade's wait for a node (src/plan/upgrade/api-steps.ts readyScripts),
// run by bash against a stand-in kubectl on PATH: right after the kubelet's
// restart the Node still carries the old kubelet's status, Ready and the old
// version, until the new kubelet posts its own (the real-cluster tier's run
// 37 failed the upgrade on that stale status, 10 s after the restart).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readyScripts } from '../src/plan/upgrade/api-steps.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('upgrade-ready');
after(() => tmp.remove());

/**
 * A kubectl that answers Ready=True and the old kubelet version for the first
 * `staleReads` version reads, the new one after; a sleep that returns at once.
 */
function standIns(dir: string, staleReads: number): void {
  writeFileSync(join(dir, 'reads'), '0');
  writeFileSync(
    join(dir, 'kubectl'),
    `#!/bin/bash
case "$*" in
  *kubeletVersion*)
    n=$(cat ${dir}/reads); echo $((n + 1)) > ${dir}/reads
    if [ "$n" -lt ${staleReads} ]; then printf v1.35.4; else printf v1.36.3; fi ;;
  *Ready*) printf True ;;
  *) exit 3 ;;
esac
`,
  );
  writeFileSync(join(dir, 'sleep'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, 'kubectl'), 0o755);
  chmodSync(join(dir, 'sleep'), 0o755);
}

function run(dir: string, timeoutSeconds: number): { status: number | null; stderr: string; reads: number } {
  const script = readyScripts('Worker-01', '1.36.3', timeoutSeconds).apply;
  const r = spawnSync('bash', ['-c', script.text], {
    env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}` },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr, reads: Number(readFileSync(join(dir, 'reads'), 'utf8')) };
}

describe('the upgrade waits for the node’s new kubelet', () => {
  it('waits out the old kubelet’s status: Ready at once, the target version three reads later', () => {
    const dir = join(tmp.dir, 'later');
    mkdirSync(dir);
    standIns(dir, 3);
    const r = run(dir, 600);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.reads, 4);
  });

  it('gives up after its time, naming what the Node says', () => {
    const dir = join(tmp.dir, 'never');
    mkdirSync(dir);
    standIns(dir, 1_000_000);
    const r = run(dir, 0);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^worker-01 is not Ready with kubelet v1\.36\.3 after 0 s \(Ready: True, kubelet: v1\.35\.4\)$/m,
    );
  });
});
