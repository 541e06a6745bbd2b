// The registry's share of a webhook decision (src/registry/budget.ts): a lookup
// that does not answer in time is "unknown", so the chain's cache and name
// heuristics decide; while it is overdue, later lookups are not waited for;
// once it ends, they are again. Resolvers here are promises the test settles.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainResolvers, heuristicResolver, type ImageOs, type ImageOsResolver } from '../src/lint/image-os.js';
import { withinBudget } from '../src/registry/budget.js';
import type { RegistryError } from '../src/registry/errors.js';

/** A registry whose every lookup waits until the test lets it answer. */
function heldRegistry(): { resolver: ImageOsResolver; calls: string[]; answer: (os?: ImageOs) => void } {
  const calls: string[] = [];
  const waiting: ((os: ImageOs | undefined) => void)[] = [];
  return {
    calls,
    resolver: {
      resolve: (image) => {
        calls.push(image);
        return new Promise((r) => waiting.push(r));
      },
    },
    answer: (os) => {
      for (const r of waiting.splice(0)) r(os);
    },
  };
}

const WIN = 'registry.example.invalid/windows/servercore:ltsc2022';

describe('withinBudget', () => {
  it('a registry that does not answer in time leaves the decision to the image name, with a warning', async () => {
    const registry = heldRegistry();
    const warnings: RegistryError[] = [];
    const chain = chainResolvers(
      withinBudget(registry.resolver, 50, (_m, e) => void warnings.push(e)),
      heuristicResolver,
    );
    const started = Date.now();
    const os = await chain.resolve(WIN);
    assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
    assert.deepEqual(os, { os: 'windows', osVersion: '10.0.20348', source: 'heuristic' });
    assert.equal(warnings[0]?.code, 'registry.slow');
    assert.match(warnings[0]?.message ?? '', /no registry answer within 0\.05 s/);
    registry.answer();
  });

  it('while a lookup is overdue the next is not waited for (nor sent); after it ends, lookups are waited for again', async () => {
    const registry = heldRegistry();
    const warnings: string[] = [];
    const limited = withinBudget(registry.resolver, 50, (m) => void warnings.push(m));
    assert.equal(await limited.resolve('a:1'), undefined);
    assert.equal(await limited.resolve('b:1'), undefined);
    assert.deepEqual(registry.calls, ['a:1'], 'b:1 not sent while a:1 is overdue');
    assert.match(warnings[1] ?? '', /^b:1: a registry lookup is overdue/);
    registry.answer({ os: 'linux', source: 'registry' });
    await new Promise((r) => setTimeout(r, 10));
    const c = limited.resolve('c:1');
    registry.answer({ os: 'linux', source: 'registry' });
    assert.deepEqual(await c, { os: 'linux', source: 'registry' });
    assert.deepEqual(registry.calls, ['a:1', 'c:1']);
  });

  it('an answer in time is the answer', async () => {
    const limited = withinBudget(
      { resolve: () => Promise.resolve({ os: 'windows' as const, source: 'registry' as const }) },
      1000,
      () => assert.fail('no warning'),
    );
    assert.deepEqual(await limited.resolve('x:1'), { os: 'windows', source: 'registry' });
  });
});
