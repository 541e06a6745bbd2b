// The generated parser (parser.generated.ts) must be the zod schema, compiled:
// current with the schema, and returning exactly zod's value for every spec it
// accepts. A spec it does not accept goes to zod, so INVALID is always safe;
// a wrong success would not be caught later, so successes are compared.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseSpecSchema } from './parse.js';
import { INVALID, parseSpecDocument } from './parser.generated.js';
import { specParserSource } from './parser-source.js';
import { clusterSpecSchema } from './schema.js';
import { loadYaml } from './yaml.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

test('src/spec/parser.generated.ts is what the generator writes from the schema now (npm run schema)', () => {
  assert.equal(readFileSync(repo('src/spec/parser.generated.ts'), 'utf8'), specParserSource());
});

/** Every spec document in the examples and the spec corpus. */
function specDocuments(): [string, Record<string, unknown>][] {
  const files = [
    ...readdirSync(repo('examples')).map((f) => `examples/${f}`),
    ...readdirSync(repo('test/spec-corpus')).map((f) => `test/spec-corpus/${f}`),
  ].filter((f) => f.endsWith('.yaml'));
  // The corpus's hostile files (alias bombs, syntax errors) never reach the schema: readSpec refuses them first.
  return files.flatMap((f): [string, Record<string, unknown>][] => {
    const loaded = loadYaml(readFileSync(repo(f), 'utf8'), f);
    return loaded.ok ? [[f, loaded.yaml.value as Record<string, unknown>]] : [];
  });
}

const REPLACEMENTS: readonly unknown[] = [
  null,
  0,
  -1,
  1.5,
  70000,
  '',
  'x',
  'Upper_Case',
  'a'.repeat(300),
  '😀'.repeat(40),
  'line\nbreak',
  true,
  [],
  ['x'],
  {},
  { unknownField: 1 },
];

/** The document with the value at `path` replaced (or removed, for `undefined`). */
function mutated(doc: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === undefined && !Array.isArray(at)) delete at[last];
  else at[last] = value;
  return copy;
}

function* paths(value: unknown, prefix: (string | number)[] = []): Generator<(string | number)[]> {
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    yield path;
    yield* paths(child, path);
  }
}

/** Variants of a value that stay close to valid: case, whitespace, bounds. */
function nearby(value: unknown): unknown[] {
  if (typeof value === 'string') return [value.toUpperCase(), `${value} `, `${value}-`, value.slice(1), `${value}0`];
  if (typeof value === 'number') return [value + 1, value - 1, value + 0.5, -value, value * 1000];
  if (Array.isArray(value)) return [[...value, ...value], value.slice(1)];
  if (value !== null && typeof value === 'object') return [{ ...value, zz: 'x' }];
  return [];
}

test('the generated parser returns what zod returns for every spec it accepts (examples, corpus, mutations)', () => {
  let accepted = 0;
  let handedToZod = 0;
  for (const [file, doc] of specDocuments()) {
    const cases: [string, unknown][] = [[file, doc]];
    for (const path of paths(doc)) {
      const original = path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], doc);
      for (const value of [undefined, ...REPLACEMENTS, ...nearby(original)])
        cases.push([`${file} ${path.join('.')} = ${JSON.stringify(value)?.slice(0, 30)}`, mutated(doc, path, value)]);
    }
    for (const [name, input] of cases) {
      const fast: unknown = parseSpecDocument(input);
      const zod = clusterSpecSchema.safeParse(input);
      if (fast === INVALID) {
        handedToZod += 1;
        continue;
      }
      accepted += 1;
      assert.ok(zod.success, `${name}: the generated parser accepts what zod rejects`);
      assert.deepStrictEqual(fast, zod.data, name);
    }
  }
  // Both outcomes are exercised many times, so the comparison above is not vacuous.
  assert.ok(accepted > 1000 && handedToZod > 1000, `accepted ${accepted}, handed to zod ${handedToZod}`);
});

test('every example spec takes the generated path (zod is not needed for them)', () => {
  for (const [file, doc] of specDocuments()) {
    if (file.startsWith('examples/')) assert.notEqual(parseSpecDocument(doc), INVALID, file);
  }
});

test('a download URL is decided by the generated parser and zod alike (no format only zod knows)', () => {
  const [, doc] = specDocuments().find(([f]) => f === 'examples/k8s-libvirt-1-1-1.yaml') ?? assert.fail('no example');
  const withUrl = mutated(doc, ['spec', 'downloads'], { 'linux/kubelet': { url: 'https://mirror.example/kubelet' } });
  assert.deepEqual(parseSpecDocument(withUrl), clusterSpecSchema.parse(withUrl));
  // user:password@ is taken (it becomes a secret, model/url-credentials.ts): by both alike.
  const withCredentials = mutated(doc, ['spec', 'downloads'], { 'linux/kubelet': { url: 'https://u:p@h.example/x' } });
  assert.deepEqual(parseSpecDocument(withCredentials), clusterSpecSchema.parse(withCredentials));
  for (const url of ['javascript:alert(1)', 'https://h.example/x#$(id)', 'https://u%zz:p@h.example/x', 'ftp://h/x']) {
    const bad = mutated(doc, ['spec', 'downloads'], { 'linux/kubelet': { url } });
    assert.equal(parseSpecDocument(bad), INVALID, url);
    assert.equal(parseSpecSchema(bad).success, false, url);
  }
  const rejected = parseSpecSchema(mutated(doc, ['metadata', 'name'], 'Bad_Name'));
  assert.equal(rejected.success, false);
  assert.equal(rejected.success ? '' : rejected.error.issues[0]?.path.join('.'), 'metadata.name');
});
