// dist/vendor/yaml.cjs (scripts/bundle-yaml.mjs, part of `npm run build`) is
// the installed yaml package in one file: the spec reader uses it because it
// loads in a third of the time. It must be the package, not a variant: same
// exports, same values and same errors on every spec and hostile input here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import type * as Yaml from 'yaml';
import { YAML } from '../src/spec/yaml-lib.js';
import { repoPath } from './helpers/cli.js';

const require = createRequire(import.meta.url);
const BUNDLE = repoPath('dist/vendor/yaml.cjs');
const pkg = require('yaml') as typeof Yaml;

function inputs(): [string, string][] {
  const files = [
    ...readdirSync(repoPath('examples')).map((f) => `examples/${f}`),
    ...readdirSync(repoPath('test/spec-corpus')).map((f) => `test/spec-corpus/${f}`),
  ].filter((f) => f.endsWith('.yaml'));
  return [
    ...files.map((f): [string, string] => [f, readFileSync(repoPath(f), 'utf8')]),
    ['duplicate key', 'a: 1\na: 2\n'],
    ['bad indentation', 'a:\n  b: 1\n c: 2\n'],
    ['tags and anchors', 'a: &x !!str 1\nb: *x\nc: !!binary aGk=\nd: 2001-12-14\n'],
    ['flow', '{a: [1, 2, {b: null}], "c": ~}\n'],
  ];
}

/** What a parse of `text` gives: the value, or the errors' codes and first lines. */
function outcome(lib: typeof Yaml, text: string): unknown {
  const lines = new lib.LineCounter();
  const doc = lib.parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true });
  if (doc.errors.length > 0) return doc.errors.map((e) => [e.code, e.message.split('\n')[0], lines.linePos(e.pos[0])]);
  try {
    return { value: doc.toJS({ maxAliasCount: 100 }), text: doc.toString() };
  } catch (error) {
    return { threw: String(error) };
  }
}

describe('the one-file yaml of npm run build', () => {
  it('exists, and is what the spec reader loads', () => {
    assert.ok(existsSync(BUNDLE), 'dist/vendor/yaml.cjs is missing: `npm run build` writes it');
    assert.equal(YAML, require(BUNDLE));
    assert.notEqual(YAML, pkg);
  });

  it('is the installed yaml version, with the same exports', () => {
    const version = (
      JSON.parse(readFileSync(repoPath('node_modules/yaml/package.json'), 'utf8')) as { version: string }
    ).version;
    assert.match(
      readFileSync(BUNDLE, 'utf8'),
      new RegExp(`^'use strict';\\n// yaml ${version.replaceAll('.', '\\.')} `),
    );
    assert.deepEqual(Object.keys(YAML).sort(), Object.keys(pkg).sort());
  });

  it('parses every example, corpus spec and hostile input as the package does', () => {
    for (const [name, text] of inputs()) assert.deepEqual(outcome(YAML, text), outcome(pkg, text), name);
  });
});
