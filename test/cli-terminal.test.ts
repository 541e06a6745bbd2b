// Control characters from inputs never reach the terminal raw: a host name
// holding ESC [2K (erase line) and a green "all good" is printed escaped by
// lint, validate and inventory import; kubemix's own colours still work; a
// JSON document that passes through stays the same JSON.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { run } from '../src/cli/main.js';
import { terminalText, terminalValue } from '../src/cli/terminal.js';
import { captureIo, hasStackTrace, runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('terminal');
after(() => tmp.remove());
const ATTACK = '\u001b[2K\r\u001b[32m✔ all good\u001b[0m\u0007\u009b2J\u202e';
/** Any C0 control but newline, DEL, a C1 control or a bidi override. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function file(name: string, text: string): string {
  writeFileSync(join(tmp.dir, name), text);
  return name;
}

function noRawControls(text: string): void {
  assert.doesNotMatch(text, RAW_CONTROL, JSON.stringify(text));
}

describe('terminalText / terminalValue', () => {
  it('escape every control character and bidi control, keep newlines, tabs, CRLF and all other text', () => {
    for (let c = 0; c <= 0x9f; c += 1) {
      const ch = String.fromCharCode(c);
      const printable = c >= 0x20 && c < 0x7f;
      const loose = terminalText(`a${ch}b`);
      if (printable || ch === '\n' || ch === '\t') assert.equal(loose, `a${ch}b`);
      else assert.match(loose, /^a\\(u00[0-9a-f]{2}|r)b$/, `U+${c.toString(16)}`);
      const strict = terminalValue(`a${ch}b`);
      if (printable) assert.equal(strict, `a${ch}b`);
      else assert.match(strict, /^a\\(u00[0-9a-f]{2}|r|n|t)b$/, `U+${c.toString(16)}`);
    }
    for (const bidi of ['\u202e', '\u2066', '\u200f', '\u061c']) assert.notEqual(terminalText(bidi), bidi);
    assert.equal(terminalText('line one\r\nline two\n'), 'line one\r\nline two\n');
    assert.equal(terminalText('C:\\Windows ümlaut 漢字 🙂'), 'C:\\Windows ümlaut 漢字 🙂');
  });

  it('a JSON document passes through as the same JSON', () => {
    const value = { name: `x${ATTACK}\u007f`, list: ['\u0085', 'plain'] };
    const text = JSON.stringify(value, null, 2);
    const escaped = terminalText(text);
    noRawControls(escaped);
    assert.deepEqual(JSON.parse(escaped), value);
  });
});

describe('through the CLI', () => {
  it('validate: a spec value with escape sequences is printed escaped, in text and in JSON', async () => {
    const spec = file(
      'evil.yaml',
      `apiVersion: kubemix.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: ok\n  "evil${JSON.stringify(ATTACK).slice(1, -1)}": 1\n`,
    );
    const r = await runCli(['validate', spec], { cwd: tmp.dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /evil\.yaml:5:\d+ metadata\.evil\\u001b\[2K/);
    assert.match(r.stderr, /\\u001b\[2K/);
    noRawControls(r.stderr + r.stdout);
    assert.equal(hasStackTrace(r.stderr), false);
    const json = await runCli(['validate', '--json', spec], { cwd: tmp.dir });
    noRawControls(json.stdout);
    assert.equal((JSON.parse(json.stdout) as { ok: boolean }).ok, false);
  });

  it('inventory import: a host name with escape sequences is printed escaped', async () => {
    // `[` starts a host range in a host pattern, so this name holds ESC sequences without one.
    const inv = file('evil.ini', `[kube_control_plane]\ncp1${ATTACK.replace(/[\s[]/g, '')} ansible_host=10.0.0.1\n`);
    const r = await runCli(['inventory', 'import', inv], { cwd: tmp.dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /evil\.ini:2 /);
    assert.match(r.stderr, /cp1\\u001b2K\\u001b32m/);
    noRawControls(r.stderr + r.stdout);
  });

  it("lint: names from a manifest are printed escaped; with a terminal, only kubemix's own colours are raw", async () => {
    const manifest = file(
      'evil-pod.yaml',
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        `  name: "web${JSON.stringify(ATTACK).slice(1, -1)}"`,
        'spec:',
        '  containers:',
        '    - name: c',
        '      image: mcr.microsoft.com/windows/servercore:ltsc2022',
        '',
      ].join('\n'),
    );
    const plain = await runCli(['lint', '--offline', manifest], { cwd: tmp.dir });
    assert.notEqual(plain.code, 4, plain.stderr);
    assert.match(plain.stdout, /web\\u001b\[2K/);
    noRawControls(plain.stdout + plain.stderr);
    const io = { ...captureIo({ cwd: tmp.dir }), isTty: true };
    await run(['lint', '--offline', manifest], io);
    const colours = io.out().replace(/\u001b\[\d+m/g, '');
    noRawControls(colours);
    assert.match(io.out(), /\u001b\[31merror/);
    assert.doesNotMatch(io.out(), /\u001b\[2K|\u001b\[32m/);
  });

  it('diagnostics on a terminal keep their colour, the value in them is escaped', async () => {
    const inv = file(
      'evil-ok.ini',
      `[kube_control_plane]\ncp1${ATTACK.replace(/[\s[]/g, '')} ansible_host=10.0.0.1 kubernetes_node_hostname=cp1\n`,
    );
    const io = { ...captureIo({ cwd: tmp.dir }), isTty: true };
    assert.equal(await run(['inventory', 'import', inv], io), 0, io.err());
    assert.match(io.err(), /\u001b\[33mwarning\u001b\[0m evil-ok\.ini:2 .*cp1\\u001b2K/);
    noRawControls(io.err().replace(/\u001b\[33mwarning\u001b\[0m/g, ''));
  });
});
