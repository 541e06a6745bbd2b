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
    case '>=':
      return cmp(v, w) >= 0;
    case '>':
      return cmp(v, w) > 0;
    case '<=':
      return cmp(v, w) <= 0;
    case '<':
      return cmp(v, w) < 0;
    case '^':
      return cmp(v, w) >= 0 && (w[0] > 0 ? v[0] === w[0] : w[1] > 0 ? v[0] === 0 && v[1] === w[1] : cmp(v, w) === 0);
    case '~':
      return cmp(v, w) >= 0 && v[0] === w[0] && (parts < 2 || v[1] === w[1]);
    default:
      return parts === 3 ? cmp(v, w) === 0 : v[0] === w[0] && (parts < 2 || v[1] === w[1]);
  }
}

function satisfies(range: string, v: Version): boolean {
  return range.split('||').some((set) =>
    set
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .every((c) => admits(c, v)),
  );
}

/** Versions a range promises: each alternative's lowest version, a late release of that major, and later majors after `>=`. */
function samples(range: string): Version[] {
  return range.split('||').flatMap((set): Version[] => {
    const m = /(>=|\^|~)?\s*(\d+(?:\.\d+){0,2})/.exec(set.trim());
    if (m === null) throw new Error(`cannot read range ${range}`);
    const v = parse(m[2]!);
    return m[1] === '>=' ? [v, [v[0], 99, 0], [v[0] + 2, 0, 0], [v[0] + 4, 0, 0]] : [v, [v[0], 99, 0]];
  });
}

interface Locked {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: { readonly node?: string };
}

function refusals(packages: [string, Locked][], versions: readonly Version[]): string[] {
  return packages
    .filter(([, p]) => p.engines?.node !== undefined)
    .flatMap(([path, p]) =>
      versions
        .filter((v) => !satisfies(p.engines!.node!, v))
        .map((v) => `${path}@${p.version}: engines.node ${p.engines!.node} refuses Node ${v.join('.')}`),
    );
}

describe('Node engines of the installed packages', () => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as {
    engines: { node: string };
    devEngines: { runtime: { name: string; version: string } };
  };
  const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as { packages: Record<string, Locked> };
  const locked = Object.entries(lock.packages).filter(([path]) => path !== '');

  it('the range reader agrees with npm on the forms in the lockfile', () => {
    assert.equal(satisfies('>=22', [20, 0, 0]), false);
    assert.equal(satisfies('^18 || ^20 || >= 21', [20, 5, 1]), true);
    assert.equal(satisfies('^18 || >=21', [20, 0, 0]), false);
    assert.equal(satisfies('>= 14.6', [14, 5, 9]), false);
    assert.equal(satisfies('~20.1', [20, 2, 0]), false);
    assert.deepEqual(samples('^20.19.0 || >=24'), [
      [20, 19, 0],
      [20, 99, 0],
      [24, 0, 0],
      [24, 99, 0],
      [26, 0, 0],
      [28, 0, 0],
    ]);
  });

  it('every package kubemix runs with (dependencies) accepts the Node that package.json engines promises', () => {
    assert.deepEqual(
      refusals(
        locked.filter(([, p]) => p.dev !== true),
        samples(pkg.engines.node),
      ),
      [],
    );
  });

  it('every development package (tests, build, lint) accepts the Node that devEngines asks of a checkout', () => {
    assert.equal(pkg.devEngines.runtime.name, 'node');
    assert.deepEqual(
      refusals(
        locked.filter(([, p]) => p.dev === true),
        samples(pkg.devEngines.runtime.version),
      ),
      [],
    );
  });

  it('a checkout asks no less of Node than kubemix does', () => {
    for (const v of samples(pkg.devEngines.runtime.version))
      assert.ok(satisfies(pkg.engines.node, v), `devEngines admits ${v.join('.')}, engines does not`);
  });
});
