// spec.kubernetes.crictl: an operator whose bundle carries another crictl
// than the matrix's for the minor (the real-cluster tier: cri-tools v1.35.0
// is not on the Go module proxy, its 1.35 bundle has crictl v1.36.0) pins it,
// and the plan downloads, installs and checks that release.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InvalidSpecError } from '../src/errors.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';

const EXAMPLE = repoPath('examples', 'k8s-libvirt-1-1-1.yaml');

function planWith(kubernetes: string) {
  const text = readFileSync(EXAMPLE, 'utf8').replace('    version: "1.36"\n', kubernetes);
  assert.notEqual(text, readFileSync(EXAMPLE, 'utf8'), 'the example still has its kubernetes block');
  return assemblePlan(resolveModel(readSpec({ kind: 'file', path: join('/spec', 'pin.yaml'), text })));
}

function crictl(kubernetes: string): { url: string; check: string } {
  const { plan } = planWith(kubernetes);
  const download = (plan.downloads ?? []).find((d) => d.id === 'linux/crictl.tar.gz');
  const task = plan.tasks.find((t) => t.name === 'crictl-binary');
  return { url: download?.url ?? '', check: JSON.stringify(task ?? {}) };
}

describe('spec.kubernetes.crictl', () => {
  it('without it, the matrix’s crictl for the minor', () => {
    const { url, check } = crictl('    version: "1.35"\n');
    assert.match(url, /\/v1\.35\.0\/crictl-v1\.35\.0-linux-amd64\.tar\.gz$/);
    assert.match(check, /crictl version v1\.35\.0/);
  });

  it('pinned, that release is downloaded and checked', () => {
    const { url, check } = crictl('    version: "1.35"\n    crictl: "1.36.0"\n');
    assert.match(url, /\/v1\.36\.0\/crictl-v1\.36\.0-linux-amd64\.tar\.gz$/);
    assert.match(check, /crictl version v1\.36\.0/);
    assert.doesNotMatch(check, /1\.35\.0/);
  });

  it('a value that is not a release is refused, naming the field', () => {
    assert.throws(
      () => planWith('    version: "1.35"\n    crictl: "1.36"\n'),
      (error: unknown) =>
        error instanceof InvalidSpecError &&
        error.diagnostics.some((d) => d.path.includes('crictl') && /1\.36\.0/.test(d.message)),
    );
  });
});
