// Every config.toml kubemix renders, read by containerd itself: the binary of
// the matrix's default line, built here from the Go module proxy
// (scripts/kube-binaries.sh). `containerd --config FILE config dump` loads the
// file as the daemon does on start: a config of an older schema version is
// migrated with a warning (run 13 of the real-cluster tier found containerd
// 2.3 warning on every start — it reads version 4), an unknown key is a
// warning too, a bad one an error. Both Linux and Windows configs go through
// it (the Windows one with the Linux build: the parser is the same code).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { CONTAINERD_PATHS } from '../src/render/containerd/paths.js';
import { WIN } from '../src/render/windows/paths.js';
import { readSpec } from '../src/spec/read.js';
import { kubeBinaries } from './helpers/kube-binaries.js';
import { REPO, scratch } from './helpers/shapes.js';

const examples = readdirSync(join(REPO, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

/** Runs the built containerd (through setpriv, as every built binary here: killed with the test). */
function containerdRun(
  containerd: string,
  args: readonly string[],
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('setpriv', ['--pdeathsig=KILL', '--', containerd, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dump = (containerd: string, args: readonly string[]) => containerdRun(containerd, [...args, 'config', 'dump']);

describe('containerd reads every rendered config.toml without migrating or ignoring a key', () => {
  let containerd = '';
  let current = '';
  const tmp = scratch('containerd-parse');
  before(() => {
    containerd = kubeBinaries().containerd();
    // The schema version this containerd writes: its own default config's first key.
    const def = containerdRun(containerd, ['config', 'default']);
    current = /^version = (\d+)$/m.exec(def.stdout)?.[1] ?? assert.fail(`no version in: ${def.stdout.slice(0, 200)}`);
  });
  after(() => tmp.remove());

  for (const example of examples)
    it(`${example}: each node's config.toml loads as it is, at containerd's own schema version`, () => {
      const path = join(REPO, 'examples', example);
      const model = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
      const configs = assemblePlan(model).files.filter(
        (f) => f.remotePath === CONTAINERD_PATHS.config || f.remotePath === WIN.containerdConfig,
      );
      assert.ok(configs.length > 0, 'a config.toml');
      for (const f of configs) {
        const file = join(tmp.dir, `${f.node}.toml`);
        writeFileSync(file, f.content);
        const r = dump(containerd, ['--config', file]);
        assert.equal(r.status, 0, `${f.node} ${f.remotePath}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /level=(warning|error)/, `${f.node} ${f.remotePath}`);
        assert.match(f.content, new RegExp(`^version = ${current}$`, 'm'), `${f.node}: containerd writes ${current}`);
        // The CRI sections were read, not dropped: the pinned sandbox image is containerd's now.
        const sandbox = /sandbox = '([^']+)'/.exec(f.content)?.[1] ?? assert.fail(`${f.node}: no sandbox`);
        assert.ok(r.stdout.includes(`sandbox = '${sandbox}'`), `${f.node}: sandbox ${sandbox} in the dump`);
      }
    });

  it('catches what it is for: a config one schema version behind is migrated with a warning', () => {
    const file = join(tmp.dir, 'old.toml');
    writeFileSync(file, `version = ${Number(current) - 1}\n`);
    const r = dump(containerd, ['--config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /level=warning.*Configuration migrated from version/);
  });

  it('and an unknown key in a CRI section is a warning', () => {
    const file = join(tmp.dir, 'unknown.toml');
    writeFileSync(file, `version = ${current}\n[plugins.'io.containerd.cri.v1.runtime']\n  no_such_key = true\n`);
    const r = dump(containerd, ['--config', file]);
    assert.match(r.stderr, /level=warning/);
  });
});
