// systemdEnvironment against systemd's own unit loader: `systemd-analyze
// verify` loads one unit per value and, at debug level, dumps each unit's
// parsed settings; the dump must show exactly one Environment entry, equal
// to NAME=value, and no Exec line beyond the unit's own ExecStart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemdEnvironment } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

const REFUSED = /[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef\ufffe\uffff]|\p{Noncharacter_Code_Point}/u;
const missing =
  spawnSync('systemd-analyze', ['--version']).status === 0
    ? false
    : 'systemd-analyze is not installed (Debian package systemd)';

/** Unit name → its dump section's `Environment:` and `Exec…` lines. */
function dumpedSettings(stdout: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let unit: string | undefined;
  for (const line of stdout.split('\n')) {
    const head = /^\t-> Unit (\S+):$/.exec(line);
    if (head !== null) {
      unit = head[1] ?? '';
      out.set(unit, []);
    } else if (unit !== undefined && /^\t\t(Environment|Exec\w*|Command Line): /.test(line))
      out.get(unit)?.push(line.slice(2));
  }
  return out;
}

test(
  'systemdEnvironment: systemd parses every value back unchanged, as one variable, nothing added',
  { skip: missing },
  () => {
    const cases = escapeAll(
      (v) => systemdEnvironment('KUBEMIX_T', v),
      (v) => unencodable(v) || REFUSED.test(v),
      1500,
    );
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-systemd-'));
    try {
      const units = cases.map((c, i) => {
        const file = join(dir, `kmx-${i}.service`);
        writeFileSync(file, `[Unit]\nDescription=t\n[Service]\nType=oneshot\nExecStart=/bin/true\n${c.text}\n`);
        return file;
      });
      for (let from = 0; from < units.length; from += 100) {
        const batch = units.slice(from, from + 100);
        const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...batch], {
          env: { ...process.env, SYSTEMD_LOG_LEVEL: 'debug' },
          encoding: 'utf8',
          maxBuffer: 1 << 26,
          timeout: 120_000,
        });
        const complaints = run.stderr.split('\n').filter((l) => /kmx-\d+\.service:\d+: /.test(l));
        assert.deepEqual(complaints, [], 'systemd complained about a rendered line');
        const dumped = dumpedSettings(run.stdout);
        batch.forEach((_, j) => {
          const c = cases[from + j];
          assert.ok(c !== undefined);
          const settings = (dumped.get(`kmx-${from + j}.service`) ?? []).filter(
            (s) => !s.startsWith('Exec') || !s.includes('/bin/true'),
          );
          assert.deepEqual(
            settings.filter((s) => !s.startsWith('Command Line')),
            [`Environment: KUBEMIX_T=${c.value}`],
            c.text,
          );
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
