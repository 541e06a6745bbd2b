// verify's Linux probe scripts with a hostile value in every place a value
// lands (issue 31's generic check, for src/verify): each script runs under sh
// with stub tools on PATH that record their arguments; the payload must reach
// the tool as one argument, byte for byte, and never run. Values that would
// land inside a quoted program (bash -c '…') are refused by the `shell`
// template instead of being quoted by hand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as s from '../src/verify/underlay/scripts.js';
import * as u from '../src/verify/underlay/udp-scripts.js';
import { linuxClientScript } from '../src/verify/cluster/probes.js';

/** Would create `pwned` in the working directory if any shell ever ran it as code. */
const PAYLOAD = `x'"$(touch pwned)\`touch pwned\`;touch pwned #`;

function runWithStubs(script: string): { args: string[]; pwned: boolean; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-verify-hostile-'));
  try {
    const log = join(dir, 'args');
    // Every tool the probes call: prints each argument on its own NUL-terminated record.
    for (const tool of ['ping', 'getent', 'ip', 'bridge', 'python3', 'timeout']) {
      const f = join(dir, tool);
      writeFileSync(f, `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a" >> '${log}'; done\n`);
      chmodSync(f, 0o755);
    }
    const r = spawnSync('sh', ['-c', script], {
      cwd: dir,
      env: { PATH: `${dir}:/usr/bin:/bin` },
      encoding: 'utf8',
      timeout: 10_000,
    });
    const args = existsSync(log) ? readFileSync(log, 'utf8').split('\0').slice(0, -1) : [];
    return { args, pwned: existsSync(join(dir, 'pwned')), stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("verify's Linux probe scripts with a hostile value", () => {
  const cases: [string, string][] = [
    ['dns', s.linuxDns(PAYLOAD).script],
    ['vxlan (device)', s.linuxVxlanPing(PAYLOAD, '10.0.0.2').script],
    ['udp listener (token)', u.linuxUdpListener(4789, [PAYLOAD], 1).script],
    ['udp sender (address, token)', u.linuxUdpSender(PAYLOAD, 4789, PAYLOAD).script],
  ];
  for (const [name, script] of cases)
    it(`${name}: the value reaches the tool as one argument and never runs`, () => {
      const r = runWithStubs(script);
      assert.equal(r.pwned, false, `the payload ran:\n${script}`);
      assert.ok(r.args.includes(PAYLOAD), `no argument is the payload: ${JSON.stringify(r.args)}`);
    });

  it("tcp, ping, mtu, route: an address that is not a plain word is refused (bash code in bash -c; in '…' elsewhere)", () => {
    assert.throws(() => s.linuxTcp(PAYLOAD, 6443), /shell template|cannot be written/);
    assert.throws(() => s.linuxPing(PAYLOAD), /shell template|cannot be written/);
    assert.throws(() => s.linuxPing(PAYLOAD, 1472), /shell template|cannot be written/);
    assert.throws(() => s.linuxRoute(PAYLOAD), /shell template|cannot be written/);
    assert.match(s.linuxPing('10.0.0.2', 1472).script, /ping -n -c 3 -i 0\.2 -W 2 -M 'do' -s 1472 '10\.0\.0\.2' 2>&1/);
    assert.match(s.linuxTcp('10.0.0.2', 6443).script, /bash -c 'exec 3<>\/dev\/tcp\/10\.0\.0\.2\/6443'/);
  });

  it("layer 2's client script: a cell line that would end its here-document is refused", () => {
    const cell = {
      id: 'cluster/egress/a/x',
      probe: 'egress' as const,
      source: 'a',
      target: 'x',
      kind: 'tcp' as const,
      arg: `x\nCELLS\ntouch pwned`,
    };
    assert.throws(() => linuxClientScript([cell]), /delimiter CELLS/);
  });
});
