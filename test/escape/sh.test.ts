// shellQuote against the real shells: every quoted word, evaluated by dash
// and by bash, prints back exactly the value, and nothing else runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { shellQuote } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

for (const shell of ['dash', 'bash']) {
  test(`shellQuote: ${shell} reads every quoted word back unchanged`, () => {
    const cases = escapeAll(shellQuote, unencodable);
    // One printf per word, each record ended by NUL (no escaped value holds one).
    const script = `set -eu\n${cases.map((c) => `printf '%s\\0' ${c.text}`).join('\n')}\n`;
    const run = spawnSync(shell, ['-c', script], { maxBuffer: 1 << 24, cwd: '/tmp', timeout: 30_000 });
    assert.equal(run.status, 0, run.stderr.toString());
    assert.equal(run.stderr.length, 0, run.stderr.toString());
    const records = run.stdout.toString('latin1').split('\0');
    assert.equal(records.pop(), '');
    assert.equal(records.length, cases.length, 'a word split into several, or a command was added');
    cases.forEach((c, i) =>
      assert.equal(Buffer.from(records[i] ?? '', 'latin1').toString('utf8'), c.value, `${c.text}`),
    );
  });
}
