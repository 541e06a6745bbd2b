// The services registry's task is done only once the registry listens: systemd
// calls docker-registry active as soon as it forks, and the next task pushes
// images into it (the real-cluster tier's sixth run pushed into a refused
// port). The task's apply and check run here under stubs for systemctl, chown,
// chmod, sleep, sha256sum and ss (ss answers from a counter file), so the wait is tested
// for what it does, not for its text.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { planFor, scratch } from './helpers/shapes.js';

const { plan } = planFor('k8s-libvirt-1-1-1');
const registry = plan.tasks.find((t) => t.id === 'task-create-services/service-01/registry');

/** Runs `script` with stubs; `ss` reports a listener on port 5000 from its `listensAfter`-th call on. */
function runWithStubs(
  script: string,
  listensAfter: number,
  sumsMatch = true,
): { status: number | null; stderr: string; ssCalls: number } {
  const tmp = scratch('services-ready');
  try {
    const bin = join(tmp.dir, 'bin');
    const calls = join(tmp.dir, 'ss-calls');
    writeFileSync(calls, '0');
    const stub = (name: string, body: string): void => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    spawnSync('mkdir', ['-p', bin]);
    for (const name of ['systemctl', 'chown', 'chmod', 'sleep']) stub(name, 'exit 0');
    stub('sha256sum', sumsMatch ? 'exit 0' : 'exit 1');
    stub(
      'ss',
      `n=$(($(cat '${calls}') + 1)); echo "$n" > '${calls}'
case "$*" in *'sport = :5000'*) [ "$n" -ge ${listensAfter} ] && echo 'LISTEN 0 4096 *:5000 *:*' ;; esac
exit 0`,
    );
    const r = spawnSync('sh', ['-c', script], {
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin` },
      timeout: 20_000,
    });
    return {
      status: r.status,
      stderr: r.stderr,
      ssCalls: Number(spawnSync('cat', [calls], { encoding: 'utf8' }).stdout),
    };
  } finally {
    tmp.remove();
  }
}

describe('the services registry task waits for the registry to listen', () => {
  it('is planned on the services node of the 1-1-1 example', () => {
    assert.ok(registry !== undefined, 'task-create-services/service-01/registry');
  });

  it('apply returns once port 5000 listens, not when systemd says active', () => {
    assert.ok(registry !== undefined);
    const r = runWithStubs(registry.apply.script, 5);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.ssCalls, 5, 'apply asked ss until the listener appeared');
  });

  it('apply fails, naming the registry, when nothing ever listens (after the 120 s it allows)', () => {
    assert.ok(registry !== undefined);
    const r = runWithStubs(registry.apply.script, Number.MAX_SAFE_INTEGER);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /registry: docker-registry does not serve what the files say/);
    assert.equal(r.ssCalls, 240, '120 s at two tries a second');
  });

  it('check fails while nothing listens, so a resumed run restarts the registry', () => {
    assert.ok(registry !== undefined);
    const check = registry.check?.script ?? '';
    assert.notEqual(runWithStubs(check, Number.MAX_SAFE_INTEGER).status, 0);
    assert.equal(runWithStubs(check, 1).status, 0);
  });

  // sh -s counts only the last line: each part of the check must fail it on its own.
  it('check fails when the config file differs, though the registry listens and runs', () => {
    assert.ok(registry !== undefined);
    assert.notEqual(runWithStubs(registry.check?.script ?? '', 1, false).status, 0);
  });
});
