// `kubemix lint` through run(argv, io): exit codes, formats, flags, fixes on
// disk, standard input.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../src/cli/main.js';
import { RULES } from '../src/lint/rules/index.js';
import { captureIo, repoPath, runCli } from './helpers/cli.js';

const CORPUS = join(repoPath(), 'test', 'lint-corpus');
const UNPLACED =
  'kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n      image: nginx\n';
const PLACED_LINUX_NO_OS_NAME =
  'kind: Pod\nmetadata: {name: w}\nspec:\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: a, image: nginx}]\n';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'kubemix-lint-'));
}

test('clean manifests exit 0 with no output', async () => {
  const io = captureIo();
  assert.equal(await run(['lint', join(CORPUS, 'linux-deployment-placed.yaml')], io), 0);
  assert.equal(io.out(), '');
});

test('error findings exit 1, ESLint-like text on stdout, summary on stderr', async () => {
  const io = captureIo({ cwd: CORPUS });
  assert.equal(await run(['lint', 'linux-deployment-unplaced.yaml'], io), 1);
  assert.match(io.out(), /^linux-deployment-unplaced\.yaml\n {2}14:5 {2}error {4}Deployment redis: no OS placement/);
  assert.match(io.out(), /placement\/missing-os\n/);
  assert.match(io.out(), /hint: add spec\.os\.name: linux and nodeSelector kubernetes\.io\/os: linux/);
  assert.match(io.out(), /✖ 1 problem \(1 error, 0 warnings\)/);
  assert.match(io.err(), /lint found 1 error \[findings\]/);
});

test('warnings exit 0, and 1 with --strict', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'w.yaml'), PLACED_LINUX_NO_OS_NAME);
  assert.equal(await run(['lint', join(dir, 'w.yaml')], captureIo()), 0);
  const io = captureIo();
  assert.equal(await run(['lint', '--strict', join(dir, 'w.yaml')], io), 1);
  assert.match(io.err(), /1 warning \(--strict\)/);
  rmSync(dir, { recursive: true });
});

test('a directory: every file checked, unparseable input wins with exit 2', async () => {
  const io = captureIo({ cwd: repoPath() });
  assert.equal(await run(['lint', '--format', 'json', 'test/lint-corpus'], io), 2);
  const report = JSON.parse(io.out()) as {
    ok: boolean;
    summary: { files: number; unparseable: number };
    findings: { rule: string; file: string }[];
  };
  assert.equal(report.ok, false);
  assert.equal(report.summary.unparseable, 3);
  assert.ok(report.summary.files >= 30);
  // The good document of a file with a broken one is still checked.
  assert.ok(
    report.findings.some(
      (f) => f.file === join('test', 'lint-corpus', 'broken-multi-doc.yaml') && f.rule === 'placement/missing-os',
    ),
  );
  const files = report.findings.map((f) => f.file);
  assert.deepEqual(files, [...files].sort());
});

test('a missing path is reported and the others still checked (exit 2)', async () => {
  const io = captureIo({ cwd: CORPUS });
  assert.equal(await run(['lint', 'nope.yaml', 'linux-deployment-unplaced.yaml'], io), 2);
  assert.match(io.out(), /nope\.yaml\n {2}0:0 {2}error {4}cannot read: ENOENT {2}input\/unreadable/);
  assert.match(io.out(), /placement\/missing-os/);
});

test('standard input with -', async () => {
  const io = captureIo({ stdin: UNPLACED });
  assert.equal(await run(['lint', '--format', 'json', '-'], io), 1);
  const report = JSON.parse(io.out()) as { findings: { file: string; rule: string; line: number; column: number }[] };
  assert.deepEqual(
    report.findings.map((f) => [f.file, f.rule, f.line, f.column]),
    [['<stdin>', 'placement/missing-os', 4, 1]],
  );
});

test('--format sarif prints one SARIF log', async () => {
  const io = captureIo({ cwd: CORPUS });
  assert.equal(await run(['lint', '--format', 'sarif', 'windows-linux-fields.yaml'], io), 1);
  const log = JSON.parse(io.out()) as { version: string; runs: { results: { ruleId: string }[] }[] };
  assert.equal(log.version, '2.1.0');
  assert.equal(log.runs[0]?.results.length, 7);
});

test('global --json: exactly one JSON document, report inside the error on failure', async () => {
  const io = captureIo({ cwd: CORPUS });
  assert.equal(await run(['--json', 'lint', 'linux-deployment-unplaced.yaml'], io), 1);
  const doc = JSON.parse(io.out()) as { ok: boolean; error: { code: string; report: { findings: unknown[] } } };
  assert.equal(doc.ok, false);
  assert.equal(doc.error.code, 'findings');
  assert.equal(doc.error.report.findings.length, 1);
  const clean = captureIo({ cwd: CORPUS });
  assert.equal(await run(['--json', 'lint', 'cronjob-windows.yaml'], clean), 0);
  assert.equal((JSON.parse(clean.out()) as { ok: boolean }).ok, true);
});

test('--rules lists every rule with id, severity and why', async () => {
  const io = captureIo();
  assert.equal(await run(['lint', '--rules'], io), 0);
  for (const rule of RULES) assert.match(io.out(), new RegExp(`^${rule.id} +${rule.severity} +\\S`, 'm'));
  const json = captureIo();
  assert.equal(await run(['lint', '--rules', '--format', 'json'], json), 0);
  assert.equal((JSON.parse(json.out()) as unknown[]).length, RULES.length);
});

test('bad flags are input errors (exit 2)', async () => {
  for (const argv of [
    ['lint', '--format', 'xml', 'a.yaml'],
    ['lint', '--diff', 'a.yaml'],
    ['lint'],
    ['lint', '--fix', '-'],
    ['lint', '--fix', '--diff', '--format', 'json', 'a.yaml'],
    ['lint', '--nope'],
  ]) {
    const io = captureIo();
    assert.equal(await run(argv, io), 2, argv.join(' '));
  }
});

test('--fix writes placement into the files and the result lints clean', async () => {
  const dir = tempDir();
  cpSync(join(repoPath(), 'test', 'lint-fix', 'helm-multidoc.yaml'), join(dir, 'chart.yaml'));
  const io = captureIo({ cwd: dir });
  assert.equal(await run(['lint', '--fix', '.'], io), 0);
  assert.match(io.err(), /fixed placement of 2 pod templates in 1 file/);
  assert.equal(
    readFileSync(join(dir, 'chart.yaml'), 'utf8'),
    readFileSync(join(repoPath(), 'test', 'lint-fix', 'helm-multidoc.fixed.yaml'), 'utf8'),
  );
  assert.equal(await run(['lint', '.'], captureIo({ cwd: dir })), 0);
  rmSync(dir, { recursive: true });
});

test('--fix --diff prints a unified diff and writes nothing', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'pod.yaml'), UNPLACED);
  const io = captureIo({ cwd: dir });
  assert.equal(await run(['lint', '--fix', '--diff', 'pod.yaml'], io), 0);
  assert.equal(
    io.out(),
    [
      '--- a/pod.yaml',
      '+++ b/pod.yaml',
      '@@ -5,3 +5,7 @@',
      '   containers:',
      '     - name: a',
      '       image: nginx',
      '+  os:',
      '+    name: linux',
      '+  nodeSelector:',
      '+    kubernetes.io/os: linux',
      '',
    ].join('\n'),
  );
  assert.equal(readFileSync(join(dir, 'pod.yaml'), 'utf8'), UNPLACED);
  const stdin = captureIo({ stdin: UNPLACED });
  assert.equal(await run(['lint', '--fix', '--diff', '-'], stdin), 0);
  assert.match(stdin.out(), /^--- a\/<stdin>/);
  rmSync(dir, { recursive: true });
});

test("lint --cluster SPEC checks Windows builds against the spec's workers", async () => {
  // examples/k8s-libvirt-1-1-1.yaml has one Windows Server 2022 worker.
  const on2022 = await runCli([
    'lint',
    '--format',
    'json',
    '--cluster',
    'examples/k8s-libvirt-1-1-1.yaml',
    'test/lint-corpus/cluster-build-mismatch.yaml',
  ]);
  assert.equal(on2022.code, 1);
  const rules2022 = (JSON.parse(on2022.stdout) as { findings: { rule: string; container?: string }[] }).findings
    .filter((f) => f.rule === 'image/windows-build-mismatch')
    .map((f) => f.container);
  assert.deepEqual(rules2022.sort(), ['app', 'helper']);
  const bad = await runCli(['lint', '--cluster', 'k8s-libvirt-2-1-1', 'test/lint-corpus/cluster-build-mismatch.yaml']);
  assert.equal(bad.code, 2, 'an invalid cluster spec is exit 2');
});
