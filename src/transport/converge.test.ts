// Check and apply keep one timeout each: a slow check cannot hand its unused
// time to the apply, and a check that overruns its own timeout stops the task
// without applying. Run for real through the local transport (two commands,
// each under timeout(1)); the SSH session's folded command is tested the same
// way in test/transport.test.ts and test/watchdog.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LocalTransport } from './local.js';
import type { ExecRequest } from './types.js';

const sh = (script: string, timeoutMs: number, stdin?: string): ExecRequest => ({
  shell: 'sh',
  privilege: 'user',
  script,
  timeoutMs,
  ...(stdin === undefined ? {} : { stdin: Buffer.from(stdin) }),
});

describe('folded check and apply', () => {
  const t = new LocalTransport();

  it('bounds the apply by its own timeout, not by what the check left unused', async () => {
    const started = Date.now();
    const r = await t.converge(sh('sleep 0.2; exit 1', 2000), sh('sleep 2.8; echo finished', 2000));
    assert.equal(r.timedOut, true, `apply ran ${Date.now() - started} ms past its 2 s timeout: ${r.stdout}`);
    assert.equal(r.timedOutPart, 'apply');
    assert.equal(r.checkPassed, false);
    assert.doesNotMatch(r.stdout, /finished/);
  });

  it('bounds the check by its own timeout and then does not apply', async () => {
    const r = await t.converge(sh('sleep 2.8; exit 0', 2000), sh('echo applied', 2000));
    assert.equal(r.timedOut, true);
    assert.equal(r.timedOutPart, 'check');
    assert.equal(r.checkPassed, false);
    assert.doesNotMatch(r.stdout, /applied/);
    assert.doesNotMatch(r.stderr, /KUBEMIX-CHECK/, 'the token never shows');
  });

  it('passes script text unexpanded, keeps apply stdin, and reports a passing check', async () => {
    const text = "printf '%s\\n' '$HOME' 'a\\\\b' \"`echo x`\"\ncat\n";
    const applied = await t.converge(sh('exit 1', 5000), sh(text, 5000, 'from stdin\n'));
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.checkPassed, false);
    assert.equal(applied.stdout, '$HOME\na\\\\b\nx\nfrom stdin\n');
    const passed = await t.converge(sh('echo looked >&2; exit 0', 5000), sh('echo applied', 5000));
    assert.deepEqual([passed.checkPassed, passed.code, passed.stdout, passed.stderr], [true, 0, '', 'looked\n']);
  });
});
