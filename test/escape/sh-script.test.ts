// The `shell` tagged template against the real shells: an arbitrary value
// interpolated unquoted, inside "…", or into a here-document (quoted or not)
// comes back byte for byte from dash and bash, and nothing else runs; a
// value that is not a plain word inside '…' is refused, as are script pieces
// inside quotes and here-document bodies that would end early.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  ShellTemplateError,
  UnrepresentableError,
  shell,
  shellCode,
  shellLines,
  type ShellText,
} from '../../src/util/escape/index.js';
import { arbitraryStrings, unencodable } from '../helpers/arbitrary-strings.js';
import { SEED } from './common.js';

const VALUES = [...arbitraryStrings(SEED, 400), '', '-n', 'EOF', 'a\nEOF\nb', "it's", '$(id)', '`id`', '#x'].filter(
  (v) => !unencodable(v),
);

/** Runs a script under dash and bash; the records it printed, NUL-terminated. */
function run(shellName: string, script: string): string[] {
  const options = { maxBuffer: 1 << 24, cwd: '/tmp', timeout: 30_000 };
  // Each program by name (test/apt-packages.test.ts finds what the suite runs from literals).
  const r =
    shellName === 'dash' ? spawnSync('dash', ['-c', script], options) : spawnSync('bash', ['-c', script], options);
  assert.equal(r.status, 0, r.stderr.toString());
  assert.equal(r.stderr.length, 0, r.stderr.toString());
  const records = r.stdout.toString('latin1').split('\0');
  assert.equal(records.pop(), '');
  return records.map((x) => Buffer.from(x, 'latin1').toString('utf8'));
}

const FORMS: Record<string, (v: string) => ShellText> = {
  unquoted: (v) => shell`printf '%s\\0' ${v}`,
  'inside double quotes': (v) => shell`printf '%s\\0' "<${v}>"`,
  'command substitution in double quotes': (v) => shell`printf '%s\\0' "$(printf '%s' ${v})"`,
};

for (const sh of ['dash', 'bash']) {
  for (const [form, make] of Object.entries(FORMS)) {
    test(`shell\`…\`: ${sh} reads every value ${form} back unchanged`, () => {
      const script = shellLines([shellCode('set -eu'), ...VALUES.map(make)]).text;
      const got = run(sh, script);
      const want = VALUES.map((v) => (form === 'inside double quotes' ? `<${v}>` : v.replace(/\n+$/, '')));
      assert.equal(got.length, want.length, 'a word split into several, or a command was added');
      got.forEach((g, i) => assert.equal(g, form === 'unquoted' ? VALUES[i] : want[i], JSON.stringify(VALUES[i])));
    });
  }

  test(`shell\`…\`: ${sh} reads every value in a here-document back unchanged (quoted and unquoted delimiter)`, () => {
    const pieces: ShellText[] = [shellCode('set -eu')];
    const want: string[] = [];
    for (const v of VALUES) {
      for (const make of [
        (x: string) => shell`cat <<'KUBEMIX_EOF'\n${x}\nKUBEMIX_EOF\nprintf '\\0'`,
        (x: string) => shell`cat <<KUBEMIX_EOF\n${x}\nKUBEMIX_EOF\nprintf '\\0'`,
      ]) {
        if (v.split('\n').includes('KUBEMIX_EOF')) continue;
        pieces.push(make(v));
        want.push(`${v}\n`);
      }
    }
    const got = run(sh, shellLines(pieces).text);
    assert.deepEqual(got, want);
  });
}

test('shell`…`: inside single quotes only a plain word goes in; anything else is refused, typed', () => {
  assert.equal(shell`grep -q '^v${'1.2.3'}$'`.text, "grep -q '^v1.2.3$'");
  for (const v of ["a'b", 'a b', '$(id)', '"', '']) {
    if (v === '') {
      assert.equal(shell`x '${v}'`.text, "x ''");
      continue;
    }
    assert.throws(() => shell`awk '$2 == "${v}"'`, UnrepresentableError, JSON.stringify(v));
  }
});

test('shell`…`: a here-document body holding its delimiter as a line is refused', () => {
  assert.throws(() => shell`cat <<'EOF'\n${'x\nEOF\nid'}\nEOF\n`, UnrepresentableError);
  assert.equal(shell`cat <<'EOF'\n${'xEOF'}\nEOF\n`.text, "cat <<'EOF'\nxEOF\nEOF\n");
});

test('shell`…`: script pieces go in as code where a command may start, never inside quotes', () => {
  const piece = shell`echo ${'a b'}`;
  assert.equal(shell`set -eu\n${piece}\n`.text, "set -eu\necho 'a b'\n");
  assert.equal(shell`x=$(${piece})`.text, "x=$(echo 'a b')");
  assert.throws(() => shell`echo '${piece}'`, ShellTemplateError);
  assert.throws(() => shell`echo "${piece}"`, ShellTemplateError);
  assert.throws(() => shell`${shellCode("echo 'open")}`, ShellTemplateError);
});

test('shell`…`: comments, numbers and lists', () => {
  assert.equal(shell`# for ${'a b'}\necho ${'a b'}`.text, "# for a b\necho 'a b'");
  assert.throws(() => shell`# ${'a\nid'}`, UnrepresentableError);
  assert.equal(shell`sleep ${5}`.text, 'sleep 5');
  assert.throws(() => shell`sleep ${Number.NaN}`, ShellTemplateError);
  assert.equal(shell`apt-get install ${['a', 'b c']}`.text, "apt-get install a 'b c'");
  assert.equal(shell`echo "$x" ${'y'} '$z' ${'w'}`.text, `echo "$x" y '$z' w`);
  assert.equal(shell`echo \${x} ${'a b'}`.text, "echo ${x} 'a b'");
  assert.equal(shell`echo $# ${'a b'}`.text, "echo $# 'a b'");
});
