// The malformed-input corpus: every case must exit 2 with its error code and
// spec path, in text and JSON mode, without a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';

interface Case {
  readonly code: string;
  readonly path: string;
  /** When given: every error at `path` is this one message (a regular expression), worded once. */
  readonly message?: string;
}
interface Cases {
  readonly files: readonly (Case & { file: string })[];
  readonly kubeinit: readonly (Case & { argv: string[] })[];
}

const cases = JSON.parse(readFileSync(repoPath('test', 'spec-corpus', 'cases.json'), 'utf8')) as Cases;

async function expectInvalid(argv: readonly string[], expected: Case): Promise<void> {
  const json = await runCli(['validate', '--json', ...argv]);
  assert.equal(json.code, 2, `exit code for ${argv.join(' ')}\n${json.stderr}`);
  const doc = JSON.parse(json.stdout) as { ok: boolean; errors: { code: string; path: string; message: string }[] };
  assert.equal(doc.ok, false);
  assert.ok(
    doc.errors.some((e) => e.code === expected.code && e.path === expected.path),
    `expected ${expected.code} at ${expected.path}, got ${JSON.stringify(doc.errors.map((e) => `${e.code} ${e.path}`))}`,
  );
  if (expected.message !== undefined) {
    const here = doc.errors.filter((e) => e.path === expected.path).map((e) => e.message);
    assert.equal(here.length, 1, `one error at ${expected.path}, got ${JSON.stringify(here)}`);
    assert.match(here[0] ?? '', new RegExp(expected.message));
  }
  assert.equal(hasStackTrace(json.stderr), false);
  const text = await runCli(['plan', ...argv]);
  assert.equal(text.code, 2);
  assert.equal(text.stdout, '', 'no data on stdout when the spec is invalid');
  assert.match(text.stderr, new RegExp(`\\[${expected.code.replace('.', '\\.')}\\]`));
  assert.equal(hasStackTrace(text.stderr), false);
}

for (const c of cases.files) {
  test(`corpus ${c.file}: ${c.code} at ${c.path}`, async () => {
    await expectInvalid([`test/spec-corpus/${c.file}`], c);
  });
}

for (const c of cases.kubeinit) {
  test(`corpus ${c.argv.join(' ')}: ${c.code}`, async () => {
    await expectInvalid(c.argv, c);
  });
}

test('every spec error code the rules can raise appears in the corpus', () => {
  const covered = new Set([...cases.files, ...cases.kubeinit].map((c) => c.code));
  // Unreachable with today's matrix: every supported containerd line is listed
  // for every minor, and the pinned pause image is new enough for every build.
  const unreachable = new Set(['version.containerd-unsupported', 'version.pause-windows']);
  const sources = [
    'spec/rules/network.js',
    'spec/rules/nodes.js',
    'spec/rules/cni.js',
    'spec/rules/versions.js',
    'spec/rules/mirrors.js',
    'spec/rules/downloads.js',
    'spec/rules/download-file-urls.js',
    'spec/kubeinit.js',
    'spec/kubeinit-lists.js',
    'spec/kubeinit-hypervisors.js',
    'spec/yaml.js',
    'spec/schema-diagnostics.js',
    'spec/read.js',
  ];
  const codes = new Set<string>();
  for (const file of sources) {
    const text = readFileSync(repoPath('dist', 'src', file), 'utf8');
    for (const m of text.matchAll(/(?:error|fail)\('([a-z0-9-]+\.[a-z0-9-]+)'/g)) codes.add(m[1] ?? '');
    for (const m of text.matchAll(/code: '([a-z0-9-]+\.[a-z0-9-]+)'/g)) codes.add(m[1] ?? '');
  }
  const missing = [...codes].filter(
    (c) => !covered.has(c) && !unreachable.has(c) && !c.startsWith('nodes.even') && c !== 'yaml.too-large',
  );
  assert.deepEqual(missing, [], 'add a corpus case for each of these codes');
});

test('a spec file larger than 1 MiB is refused before parsing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-big-'));
  try {
    const file = join(dir, 'big.yaml');
    writeFileSync(file, `# ${'x'.repeat(1024 * 1024 + 10)}\n`);
    await expectInvalid([file], { code: 'yaml.too-large', path: file });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('flags: unknown flag, missing file, and Kubeinit-only flags with a file are exit 2', async () => {
  const bogus = await runCli(['plan', 'k8s-libvirt-1-1-1', '--bogus', '--json']);
  assert.equal(bogus.code, 2);
  assert.equal((JSON.parse(bogus.stdout) as { error: { code: string } }).error.code, 'flags.invalid');
  const missing = await runCli(['plan', 'nope/cluster.yaml']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /does not exist \[spec\.not-found\]/);
  const mixed = await runCli(['plan', 'examples/k8s-libvirt-1-1-1.yaml', '--nodes', '[[os=windows]]']);
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /flags\.kubeinit-only/);
});
