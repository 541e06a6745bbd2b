// `kubemix upgrade` at the CLI: refusals exit 2 before any host or state is
// touched, the same version plans nothing, and the spec writer keeps
// comments and changes only the version.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../src/errors.js';
import { Journal, readJournal, recordPlanHash } from '../src/exec/journal.js';
import { withKubernetesVersion } from '../src/spec/set-version.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';

const EXAMPLE = readFileSync(repoPath('examples', 'k8s-libvirt-1-1-1.yaml'), 'utf8');

describe('kubemix upgrade (CLI)', () => {
  let dir: string;
  let spec: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubemix-upgrade-'));
    spec = join(dir, 'cluster.yaml');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const state = (): string => join(dir, 'state');

  it('skipping a minor: exit 2 naming the rule, nothing written', async () => {
    writeFileSync(spec, EXAMPLE.replace('version: "1.36"', 'version: "1.34"'));
    const r = await runCli(['upgrade', spec, '--to', '1.36', '--state-dir', state()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /1\.34\.9 → 1\.36\.3 skips 1 minor release.*\[upgrade\.skew\]/);
    assert.match(r.stderr, /--to 1\.35/);
    assert.ok(!hasStackTrace(r.stderr));
    assert.ok(!existsSync(state()), 'a refused upgrade created state');
    assert.match(readFileSync(spec, 'utf8'), /version: "1\.34"/);
  });

  it('an unfinished upgrade recorded in the state directory refuses another target (exit 2)', async () => {
    writeFileSync(spec, EXAMPLE.replace('version: "1.36"', 'version: "1.35"'));
    mkdirSync(state(), { recursive: true });
    writeFileSync(join(state(), 'upgrade.json'), '{"from":"1.35.6","to":"1.36.1"}\n');
    try {
      const r = await runCli(['upgrade', spec, '--to', '1.36.2', '--state-dir', state()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /an upgrade to 1\.36\.1 is unfinished.*kubelet must never be newer/s);
      assert.match(r.stderr, /--to 1\.36\.1/);
    } finally {
      rmSync(state(), { recursive: true, force: true });
    }
  });

  it('the version the spec already has: nothing to upgrade, exit 0', async () => {
    writeFileSync(spec, EXAMPLE);
    const r = await runCli(['upgrade', spec, '--to', '1.36', '--state-dir', state()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /at 1\.36\.3 already: nothing to upgrade/);
    assert.equal(readFileSync(spec, 'utf8'), EXAMPLE);
  });

  it('bad flags: missing --to, --max-unavailable 0, an unknown --stop-after node, a Kubeinit string', async () => {
    writeFileSync(spec, EXAMPLE.replace('version: "1.36"', 'version: "1.35"'));
    const cases: [string[], RegExp][] = [
      [['upgrade', spec], /needs --to/],
      [
        ['upgrade', spec, '--to', '1.36', '--max-unavailable', '0'],
        /--max-unavailable: expected a whole number from 1/,
      ],
      [['upgrade', spec, '--to', '1.36', '--stop-after', 'nope'], /--stop-after: nope is not a node kubemix upgrades/],
      [['upgrade', 'k8s-libvirt-1-1-1', '--to', '1.37', '--hypervisors', 'h1'], /give a spec file/],
    ];
    for (const [argv, message] of cases) {
      const r = await runCli([...argv, '--state-dir', state()]);
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.ok(!existsSync(join(state(), 'upgrade.json')));
  });
});

describe('withKubernetesVersion', () => {
  it('changes only the version line; comments, order and quoting stay', () => {
    const next = withKubernetesVersion(EXAMPLE, '1.37', 'cluster.yaml');
    const a = EXAMPLE.split('\n');
    const b = next.split('\n');
    assert.equal(a.length, b.length);
    const changed = a.map((l, i) => [l, b[i]]).filter(([x, y]) => x !== y);
    assert.deepEqual(changed, [['    version: "1.36"', '    version: "1.37"']]);
  });
  it('a version that reads as a YAML float stays a string', () => {
    const next = withKubernetesVersion('# c\nspec:\n  kubernetes:\n    version: 1.35 # pinned\n', '1.40', 'x.yaml');
    assert.equal(next, '# c\nspec:\n  kubernetes:\n    version: "1.40" # pinned\n');
    assert.match(withKubernetesVersion('spec:\n  name: x\n', '1.36', 'x.yaml'), /kubernetes:\n {4}version: "1\.36"/);
  });
  it('refuses text that is not a YAML mapping', () => {
    assert.throws(() => withKubernetesVersion('- a\n- b\n', '1.36', 'x.yaml'), InputError);
  });
});

describe('recordPlanHash', () => {
  it('the journal names the new plan hash and keeps every task entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-journal-'));
    try {
      const journal = await Journal.open(dir, 'c', 'old-hash');
      await journal.record('t/h/x', { state: 'done', host: 'h', inputHash: 'i', attempts: 1 });
      await recordPlanHash(dir, 'c', 'new-hash');
      const doc = await readJournal(dir);
      assert.equal(doc?.planHash, 'new-hash');
      assert.equal(doc?.tasks['t/h/x']?.state, 'done');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
