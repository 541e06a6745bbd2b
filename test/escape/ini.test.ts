// iniValue against Debian's ansible-inventory: one host line per value in
// an INI inventory; `ansible-inventory --list` must give every host exactly
// its one variable, equal to the value, as a string (or the number).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iniValue } from '../../src/util/escape/index.js';
import { ansibleList, ansibleMissing } from '../helpers/ansible.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

test(
  'iniValue: ansible-inventory reads every value back unchanged, one variable per host',
  { skip: ansibleMissing() },
  () => {
    const cases = escapeAll(iniValue, (v) => unencodable(v) || /\{[{%#]/.test(v), 600);
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-ini-'));
    try {
      const file = join(dir, 'hosts.ini');
      const numbers = [0, 22, 65535, -1];
      const lines = [
        ...cases.map((c, i) => `h${i} v=${c.text} w=${iniValue(i)}`),
        ...numbers.map((n, i) => `n${i} v=${iniValue(n)}`),
      ];
      writeFileSync(file, `[all]\n${lines.join('\n')}\n`);
      const hostvars = ((ansibleList(file)['_meta'] ?? {}) as { hostvars: Record<string, unknown> }).hostvars;
      const want: Record<string, unknown> = {};
      cases.forEach((c, i) => {
        want[`h${i}`] = { v: c.value, w: i };
      });
      numbers.forEach((n, i) => {
        want[`n${i}`] = { v: n };
      });
      assert.equal(Object.keys(hostvars).length, Object.keys(want).length);
      for (const [host, vars] of Object.entries(want))
        assert.deepEqual(hostvars[host], vars, `${host}: ${lines.find((l) => l.startsWith(`${host} `))}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
