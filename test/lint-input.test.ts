// `kubemix lint` on hostile or odd input: alias bombs and unresolved aliases
// (file and stdin) are exit 2 with file:line, never a crash; inputs over the
// size limit are refused before parsing; a quoted scalar whose continuation
// lines start with tabs reads as libyaml readers (PyYAML, go-yaml behind
// kubectl) read it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseSource } from '../src/lint/source.js';
import { MAX_INPUT_BYTES } from '../src/lint/inputs.js';
import { hasStackTrace, runCli } from './helpers/cli.js';

/** Ten levels of nine-fold aliases: 9^10 nodes once expanded, 600 bytes as text. */
function aliasBomb(): string {
  const lines = ['  a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]'];
  for (let i = 1; i < 10; i += 1) {
    const name = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    lines.push(`  ${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n${lines.join('\n')}\n`;
}

const UNRESOLVED = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - *nothere\n';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'kubemix-lint-input-'));
}

test('an alias bomb in a file or on stdin is exit 2 at its file:line, not a crash', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'bomb.yaml'), aliasBomb());
  const file = await runCli(['lint', '--offline', 'bomb.yaml'], { cwd: dir });
  assert.equal(file.code, 2, file.stderr);
  assert.match(file.stdout, /^bomb\.yaml\n {2}6:\d+ +error +aliases expand more than 1000 times .*input\/unparseable/m);
  assert.doesNotMatch(file.stderr, /internal error|crash/i);
  assert.ok(!hasStackTrace(file.stdout + file.stderr));
  const stdin = await runCli(['lint', '--offline', '--format', 'json', '-'], { stdin: aliasBomb() });
  assert.equal(stdin.code, 2, stdin.stderr);
  const report = JSON.parse(stdin.stdout) as { findings: { file: string; line: number; rule: string }[] };
  assert.deepEqual(
    report.findings.map((f) => [f.file, f.line, f.rule]),
    [['<stdin>', 6, 'input/unparseable']],
  );
  rmSync(dir, { recursive: true });
});

test('an alias without an anchor is exit 2 at the alias', async () => {
  const result = await runCli(['lint', '--offline', '-'], { stdin: UNRESOLVED });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stdout, /6:7 +error +alias \*nothere has no anchor &nothere before it +input\/unparseable/);
  assert.ok(!hasStackTrace(result.stdout + result.stderr));
  // --fix leaves such a file alone instead of crashing.
  assert.equal((await runCli(['lint', '--offline', '--fix', '--diff', '-'], { stdin: UNRESOLVED })).code, 2);
});

test('an input over the size limit is refused before it is parsed, file or stdin', async () => {
  const dir = tempDir();
  const doc = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n---\n';
  writeFileSync(join(dir, 'huge.yaml'), doc.repeat(Math.ceil((MAX_INPUT_BYTES + 1) / doc.length)));
  writeFileSync(
    join(dir, 'small.yaml'),
    'kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: nginx}]\n',
  );
  const started = Date.now();
  const result = await runCli(['lint', '--offline', '.'], { cwd: dir });
  // Parsing 16 MiB takes the yaml library most of a minute; refusing takes a stat.
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stdout,
    /^huge\.yaml\n {2}0:0 +error +16\.0 MiB: lint reads inputs of up to 16\.0 MiB +input\/too-large/m,
  );
  assert.match(result.stdout, /hint: split the file/);
  // The other file is still checked.
  assert.match(result.stdout, /small\.yaml\n.*placement\/missing-os/);
  const stdin = await runCli(['lint', '--offline', '-'], { stdin: readFileSync(join(dir, 'huge.yaml'), 'utf8') });
  assert.equal(stdin.code, 2);
  assert.match(stdin.stdout, /<stdin>\n {2}0:0 +error +16\.0 MiB: lint reads inputs of up to 16\.0 MiB/);
  rmSync(dir, { recursive: true });
});

const TABBED = [
  'apiVersion: v1',
  'kind: Pod',
  'metadata:',
  '  name: tabbed',
  '  annotations:',
  '    description: "first line',
  '\tcontinued after a tab',
  '\t  and one more"',
  "    note: it's plain",
  "    quoted: 'single",
  "\t\tcontinued'",
  '    script: |',
  '      echo "an open quote in a block scalar',
  'spec:',
  '  containers:',
  '    - name: a',
  '      image: registry.example.com/app:1.0',
  '      args: ["--title", "two',
  '\twords"]',
  '',
].join('\n');

/** What PyYAML (libyaml's reading, as kubectl's go-yaml) makes of a text. */
function pyyaml(text: string): unknown {
  const out = execFileSync(
    '/usr/bin/python3',
    ['-c', 'import json,sys,yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))'],
    { input: text },
  );
  return JSON.parse(out.toString('utf8')) as unknown;
}

test("tabs that start a quoted scalar's continuation lines read as PyYAML reads them, lines unchanged", () => {
  const parsed = parseSource({ path: 't.yaml', text: TABBED });
  assert.deepEqual(parsed.syntaxErrors, []);
  assert.deepEqual(parsed.documents[0]?.value, pyyaml(TABBED));
  assert.equal(parsed.source, TABBED);
  assert.equal(parsed.text.split('\n').length, TABBED.split('\n').length);
  // A tab used as indentation outside a quoted scalar is still an error, where it is.
  const bad = parseSource({ path: 'b.yaml', text: 'a:\n\tb: 1\n' });
  assert.equal(bad.syntaxErrors[0]?.line, 2);
});

test('lint and --fix on the tabbed file: findings, not a cascade of syntax errors', async () => {
  const result = await runCli(['lint', '--offline', '--format', 'json', '-'], { stdin: TABBED });
  const report = JSON.parse(result.stdout) as { findings: { rule: string; line: number }[] };
  assert.deepEqual(
    report.findings.map((f) => [f.rule, f.line]),
    [['placement/missing-os', 14]],
  );
  const fixed = await runCli(['lint', '--offline', '--fix', '--diff', '-'], { stdin: TABBED });
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /^\+ {2}nodeSelector:$/m);
});
