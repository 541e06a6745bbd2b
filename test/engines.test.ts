// Every package npm installs (package-lock.json) accepts the Node versions
// package.json promises; otherwise a fresh `npm ci` prints EBADENGINE warnings
// and the package may use what the oldest promised Node lacks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { repoPath } from './helpers/cli.js';

type Version = readonly [number, number, number];

function parse(text: string): Version {
  const m = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(text);
  if (m === null) throw new Error(`cannot read version ${text}`);
  const n = (s: string | undefined): number => (s === undefined || s === 'x' || s === '*' ? 0 : Number(s));
  return [n(m[1]), n(m[2]), n(m[3])];
}

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** One comparator of a semver range (the forms npm packages use in engines.node). */
function admits(comparator: string, v: Version): boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(comparator);
  const [op, rest] = [m?.[1] ?? '', m?.[2] ?? ''];
  if (rest === '*' || rest === 'x') return true;
  const w = parse(rest);
  const parts = rest.split('.').filter((p) => p !== 'x' && p !== '*').length;
  switch (op) {
    case '>=': return cmp(v, w) >= 0;
    case '>': return cmp(v, w) > 0;
    case '<=': return cmp(v, w) <= 0;
    case '<': return cmp(v, w) < 0;
    case '^': return cmp(v, w) >= 0 && (w[0] > 0 ? v[0] === w[0] : w[1] > 0 ? v[0] === 0 && v[1] === w[1] : cmp(v, w) === 0);
    case '~': return cmp(v, w) >= 0 && v[0] === w[0] && (parts < 2 || v[1] === w[1]);
    default: return parts === 3 ? cmp(v, w) === 0 : v[0] === w[0] && (parts < 2 || v[1] === w[1]);
  }
}

function satisfies(range: string, v: Version): boolean {
  return range.split('||').some((set) => set.trim().replace(/([<>=^~]+)\s+/g, '$1').split(/\s+/).every((c) => admits(c, v)));
}

describe('Node engines of the installed packages', () => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } }> };
  const promised = /^>=\s*(\d+)$/.exec(pkg.engines.node)?.[1];

  it('package.json promises a lowest Node major (engines.node ">=N")', () => {
    assert.ok(promised !== undefined, `engines.node is ${pkg.engines.node}`);
  });

  it('the range reader agrees with npm on the forms in the lockfile', () => {
    assert.equal(satisfies('>=22', [20, 0, 0]), false);
    assert.equal(satisfies('^18 || ^20 || >= 21', [20, 5, 1]), true);
    assert.equal(satisfies('^18 || >=21', [20, 0, 0]), false);
    assert.equal(satisfies('>= 14.6', [14, 5, 9]), false);
    assert.equal(satisfies('~20.1', [20, 2, 0]), false);
  });

  it('every locked package accepts the promised Node and later majors', () => {
    const major = Number(promised);
    // The first release of the promised major, a late one, and the next two even (LTS) majors.
    const versions: Version[] = [[major, 0, 0], [major, 99, 0], [major + 2, 0, 0], [major + 4, 0, 0]];
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines?.node !== undefined)
      .flatMap(([path, p]) => versions.filter((v) => !satisfies(p.engines!.node!, v)).map((v) => `${path}@${p.version}: engines.node ${p.engines!.node} refuses Node ${v.join('.')}`));
    assert.deepEqual(refused, []);
  });
});
