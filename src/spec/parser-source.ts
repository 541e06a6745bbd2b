// Writes the spec parser that validates a spec without loading zod: zod's
// ahead-of-time compiler (compileFn of zod/v4/core) turns the schema into the
// body of a JavaScript function plus the constants it closes over (regular
// expressions, enum sets, defaults, predicates); this module writes both out
// as one ES module, src/spec/parser.generated.ts. `npm run schema` rewrites
// it; src/spec/parser.test.ts fails when it differs from what this returns.
//
// Each constant becomes source text or the generation fails: a regular
// expression or a set of literals by value, a default by its JSON value, a
// predicate of checks.ts by name, zod's object helpers by their own source.
// zod steps the module does not carry (its URL parser, the code-point count
// of an over-long string, the async guard) throw UNSUPPORTED, and the parser
// answers INVALID: the caller then parses with zod, which decides and words
// the errors. Only INVALID ever hands a spec to zod; a value the parser
// returns is what zod returns (the test compares them on every example and
// on many mutated specs).
import { isDeepStrictEqual } from 'node:util';
import { compileFn, util, validateURL, stripTabAndNewline, type $ZodType } from 'zod/v4/core';
import * as checks from './checks.js';
import { clusterSpecSchema } from './schema.js';

interface Compiled {
  readonly names: readonly string[];
  readonly body: string;
  readonly values: readonly unknown[];
}

const INVALID = Symbol.for('zod.compile.invalid');
/** zod's own helpers the generated code calls on valid specs, written out by their source (they close over nothing else). */
const ZOD_HELPERS: readonly [string, unknown][] = [
  ['isObject', util.isObject],
  ['isPlainObject', util.isPlainObject],
  ['shallowClone', util.shallowClone],
];
/** zod steps left to zod: the parser throws UNSUPPORTED there and the caller parses with zod. */
const LEFT_TO_ZOD: readonly unknown[] = [util.codePointLength, validateURL, stripTabAndNewline];
/** compileFn's guard for a predicate returning a promise (module-private in zod, so known by name). */
const ASYNC_GUARD = 'throwAsync';
/** How compileFn reads a `.default()` / `.prefault()` value. */
const DEFAULT_GETTER = '() => schema._zod.def.defaultValue';

/** compileFn's function and, for it and every function compiled inside it (record keys), body and constants. */
function compileCapturing(schema: $ZodType): { root: unknown; compiled: Map<unknown, Compiled> } {
  const compiled = new Map<unknown, Compiled>();
  const original = globalThis.Function;
  // compileFn builds its parser with `new Function(...constantNames, body)(...constantValues)`; the names,
  // body and values are not otherwise exposed, so the constructor is wrapped while it runs.
  globalThis.Function = new Proxy(original, {
    construct(target, args: string[]) {
      const factory = Reflect.construct(target, args) as (...values: unknown[]) => unknown;
      return (...values: unknown[]) => {
        const fn = factory(...values);
        compiled.set(fn, { names: args.slice(0, -1), body: args.at(-1) ?? '', values });
        return fn;
      };
    },
  });
  try {
    return { root: compileFn(schema), compiled };
  } finally {
    globalThis.Function = original;
  }
}

export function specParserSource(): string {
  const { root, compiled } = compileCapturing(clusterSpecSchema);
  const imports = new Set<string>();
  const helperNames = new Map(ZOD_HELPERS.map(([name, fn]) => [fn, name]));
  const checkNames = new Map<unknown, string>(Object.entries(checks).map(([name, value]) => [value, name]));

  const constant = (value: unknown, where: string): string => {
    if (value === INVALID) return 'INVALID';
    if (value === undefined) return 'undefined';
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return JSON.stringify(value);
    if (value instanceof RegExp) return `new RegExp(${JSON.stringify(value.source)}, ${JSON.stringify(value.flags)})`;
    if (value instanceof Set) return `new Set(${exactJson([...value], where)})`;
    if (typeof value === 'function') return fnConstant(value, where);
    if (util.isPlainObject(value)) return exactJson(value, where);
    throw new Error(`spec parser: cannot write constant ${where} (${String(value)})`);
  };
  const fnConstant = (fn: unknown, where: string): string => {
    const inner = compiled.get(fn);
    if (inner !== undefined) return func(inner, '  ');
    const helper = helperNames.get(fn);
    if (helper !== undefined) return helper;
    const check = checkNames.get(fn);
    if (check !== undefined) {
      imports.add(check);
      return check;
    }
    if (fn === Object.prototype.propertyIsEnumerable) return 'Object.prototype.propertyIsEnumerable';
    if (LEFT_TO_ZOD.includes(fn) || (fn as { name?: string }).name === ASYNC_GUARD) return 'unsupported';
    if (String(fn) === DEFAULT_GETTER) return `() => (${exactJson((fn as () => unknown)(), where)})`;
    throw new Error(`spec parser: ${where} is a function the parser cannot carry (${String(fn).slice(0, 80)})`);
  };
  const func = (c: Compiled, indent: string): string => {
    const consts = c.names
      .map((name, i) => [name, c.values[i]] as const)
      .filter(([name]) => name !== 'INVALID')
      .map(([name, value]) => `  const ${name} = ${constant(value, name)};`);
    const body = c.body.replace(/^return \(input\) => \{\n/, '').replace(/\n\}$/, '');
    if (!c.body.startsWith('return (input) => {\n')) throw new Error('spec parser: unexpected compileFn output');
    const lines = ['(() => {', ...consts, '  return (input) => {', ...indented(body, '    '), '  };', '})()'];
    return lines.join('\n').replaceAll('\n', `\n${indent}`);
  };

  const top = compiled.get(root);
  if (top === undefined) throw new Error('spec parser: compileFn built no function');
  const parser = func(top, '');
  const helpers = ZOD_HELPERS.map(([, fn]) => String(fn));
  return [
    '// @ts-nocheck',
    '// GENERATED by `npm run schema` (src/spec/parser-source.ts) from the zod schema of src/spec/schema.ts with',
    "// zod's ahead-of-time compiler (compileFn of zod/v4/core). Do not edit: src/spec/parser.test.ts fails when",
    '// this file differs from what the generator writes now.',
    ...(imports.size === 0 ? [] : [`import { ${[...imports].sort().join(', ')} } from './checks.js';`]),
    '',
    '/** What the parser returns for a spec it does not accept (the value zod uses, Symbol.for). */',
    "export const INVALID = Symbol.for('zod.compile.invalid');",
    '/** Thrown by a step this module leaves to zod; parseSpecDocument then answers INVALID. */',
    "const UNSUPPORTED = Symbol('left to zod');",
    'function unsupported() {',
    '  throw UNSUPPORTED;',
    '}',
    '',
    "// zod's object helpers (zod/v4/core util), as zod wrote them.",
    ...helpers,
    '',
    `const parse = ${parser};`,
    '',
    '/** The spec as zod parses it (defaults applied), or INVALID: then zod decides, and says why. */',
    'export function parseSpecDocument(input) {',
    '  try {',
    '    return parse(input);',
    '  } catch (error) {',
    '    if (error === UNSUPPORTED) return INVALID;',
    '    throw error;',
    '  }',
    '}',
    '',
  ].join('\n');
}

function indented(text: string, indent: string): string[] {
  return text.split('\n').map((line) => (line === '' ? line : indent + line));
}

/** JSON of a value that JSON carries exactly (no undefined, functions, class instances or regular expressions). */
function exactJson(value: unknown, where: string): string {
  const json = JSON.stringify(value);
  if (json === undefined || !isDeepStrictEqual(JSON.parse(json), value))
    throw new Error(`spec parser: constant ${where} is not plain JSON`);
  return json;
}
