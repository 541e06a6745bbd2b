// --only / --skip (issue 31): patterns that backtrack for minutes in
// JavaScript's RegExp (`(a+)+$`, `(a|a)*b`) must select in milliseconds, and
// a pattern that does not compile or is too long is exit 2 naming the flag
// and the limit. The timed part runs in a child process: a catastrophic
// RegExp blocks the event loop, so no in-process timeout could end it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { InputError } from '../src/errors.js';
import { checkSelector, MAX_PATTERN_LENGTH } from '../src/verify/select.js';
import { repoPath } from './helpers/cli.js';

const CATASTROPHIC = ['(a+)+$', '(a|a)*b', '(a|aa)+$', '^(([a-z])+.)+[A-Z]([a-z])+$', '(\\w+\\s?)+$', '(.*a){20}$'];

describe('verify --only / --skip', () => {
  it('selects with catastrophic patterns in linear time (each under 2 s over long ids)', () => {
    const select = repoPath('dist', 'src', 'verify', 'select.js');
    const program = `
      const { checkSelector } = await import(${JSON.stringify(`file://${select}`)});
      const ids = ['underlay/udp-4789/${'a'.repeat(40)}/host-2', 'cluster/pod-ip/' + 'a'.repeat(2000) + '!'];
      const times = {};
      for (const p of ${JSON.stringify(CATASTROPHIC)}) {
        const t = performance.now();
        for (const flag of ['only', 'skip']) {
          const s = flag === 'only' ? checkSelector(p, undefined) : checkSelector(undefined, p);
          for (const id of ids) s(id);
        }
        times[p] = Math.round(performance.now() - t);
      }
      console.log(JSON.stringify(times));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], {
      timeout: 30_000,
      encoding: 'utf8',
    });
    assert.equal(r.signal, null, `killed after 30 s: a pattern backtracked (${r.stderr})`);
    assert.equal(r.status, 0, r.stderr);
    const times = JSON.parse(r.stdout) as Record<string, number>;
    assert.deepEqual(Object.keys(times), CATASTROPHIC);
    for (const [pattern, ms] of Object.entries(times)) assert.ok(ms < 2000, `${pattern}: ${ms} ms`);
  });

  it('selects as before: unanchored matches over the id, --skip winning', () => {
    const s = checkSelector('/udp-', 'host-3');
    assert.equal(s('underlay/udp-4789/host-1/host-2'), true);
    assert.equal(s('underlay/udp-4789/host-1/host-3'), false);
    assert.equal(s('underlay/ping/host-1/host-2'), false);
    assert.equal(checkSelector('^cluster/', undefined)('cluster/pod-ip/a/b'), true);
    assert.equal(checkSelector('^cluster/', undefined)('underlay/ping/a/b'), false);
    assert.equal(checkSelector('(?i)UDP', undefined)('underlay/udp-4789/a/b'), true);
    assert.equal(checkSelector(undefined, undefined)('anything'), true);
  });

  it('a pattern that does not compile is an input error naming the flag', () => {
    for (const [flag, pattern] of [
      ['--only', '(['],
      ['--skip', '(?=udp)'],
      ['--only', '(a)\\1'],
    ] as const) {
      const call = (): unknown =>
        flag === '--only' ? checkSelector(pattern, undefined) : checkSelector(undefined, pattern);
      assert.throws(call, (e: unknown) => {
        assert.ok(e instanceof InputError);
        assert.equal(e.code, 'flags.invalid');
        assert.match(e.message, new RegExp(`^${flag} ".*" is not a regular expression: `));
        assert.equal(e.path, `flags.${flag.slice(2)}`);
        assert.match(e.hint ?? '', /RE2 syntax/);
        return true;
      });
    }
  });

  it('a pattern over the length limit is refused at once, naming the flag and the limit', () => {
    assert.equal(MAX_PATTERN_LENGTH, 1000);
    checkSelector('a'.repeat(MAX_PATTERN_LENGTH), undefined);
    const long = '(a+)+'.repeat(400);
    const t = performance.now();
    assert.throws(
      () => checkSelector(undefined, long),
      (e: unknown) =>
        e instanceof InputError &&
        e.message === `--skip is ${long.length} characters long; the limit is 1000` &&
        e.path === 'flags.skip',
    );
    assert.ok(performance.now() - t < 100, 'refused in milliseconds');
  });
});
