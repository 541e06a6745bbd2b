// Reading untrusted YAML with limits, so a hostile file fails fast instead of
// exhausting memory (alias bombs) or the stack (deep nesting).
import type { Document, LineCounter } from 'yaml';
import type { Diagnostic } from '../errors.js';
import { YAML } from './yaml-lib.js';

export const YAML_LIMITS = { maxBytes: 1024 * 1024, maxAliases: 100, maxDepth: 64 } as const;

export interface LoadedYaml {
  readonly value: unknown;
  readonly doc: Document;
  readonly lines: LineCounter;
}

export type YamlResult = { ok: true; yaml: LoadedYaml } | { ok: false; diagnostics: Diagnostic[] };

export function loadYaml(text: string, source: string): YamlResult {
  const fail = (code: string, message: string, hint?: string, location?: string): YamlResult => ({
    ok: false,
    diagnostics: [
      {
        code,
        severity: 'error',
        path: source,
        message,
        ...(hint === undefined ? {} : { hint }),
        ...(location === undefined ? {} : { location }),
      },
    ],
  });
  if (Buffer.byteLength(text, 'utf8') > YAML_LIMITS.maxBytes) {
    return fail(
      'yaml.too-large',
      `the file is larger than ${YAML_LIMITS.maxBytes} bytes`,
      'a cluster spec is a few kilobytes; check the path',
    );
  }
  if (flowDepth(text) > YAML_LIMITS.maxDepth) {
    return fail('yaml.too-deep', `nesting is deeper than ${YAML_LIMITS.maxDepth} levels`);
  }
  const lines = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lines.linePos(first.pos[0]);
    const location = `${source}:${pos.line}:${pos.col}`;
    // The location is the diagnostic's own field; the message does not repeat it.
    return fail(
      'yaml.syntax',
      first.message.split('\n')[0] ?? 'invalid YAML',
      'fix the YAML syntax at that line',
      location,
    );
  }
  const proto = protoKey(doc);
  if (proto !== undefined) {
    const pos = lines.linePos(proto);
    return fail(
      'yaml.key',
      "a key named __proto__ is not allowed: JavaScript reads it as the object's prototype, not as a name",
      'rename or remove the key',
      `${source}:${pos.line}:${pos.col}`,
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_LIMITS.maxAliases });
  } catch (error) {
    return fail(
      'yaml.aliases',
      `too many alias expansions (${error instanceof Error ? error.message : String(error)})`,
      'do not use YAML aliases to build large documents',
    );
  }
  if (valueDepth(value) > YAML_LIMITS.maxDepth)
    return fail('yaml.too-deep', `nesting is deeper than ${YAML_LIMITS.maxDepth} levels`);
  return { ok: true, yaml: { value, doc, lines } };
}

/** The offset of the first mapping key `__proto__`, which toJS would drop or turn into a prototype. */
function protoKey(doc: Document): number | undefined {
  let at: number | undefined;
  YAML.visit(doc, {
    Pair(_, pair) {
      if (YAML.isScalar(pair.key) && pair.key.value === '__proto__') {
        at = pair.key.range?.[0] ?? 0;
        return YAML.visit.BREAK;
      }
      return undefined;
    },
  });
  return at;
}

/** Deepest bracket nesting, counted before parsing so the parser never recurses that deep. */
function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (const ch of text) {
    if (ch === '[' || ch === '{') max = Math.max(max, ++depth);
    else if ((ch === ']' || ch === '}') && depth > 0) depth -= 1;
  }
  return max;
}

function valueDepth(value: unknown, depth = 0): number {
  if (depth > YAML_LIMITS.maxDepth) return depth;
  if (value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Object.values(value)) max = Math.max(max, valueDepth(child, depth + 1));
  return max;
}

/** `file:line:col` of the value at `path` in the document, when it is there. */
export function locate(yaml: LoadedYaml, source: string, path: readonly (string | number)[]): string | undefined {
  for (let n = path.length; n > 0; n -= 1) {
    const node = yaml.doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range !== undefined) {
      const pos = yaml.lines.linePos(node.range[0]);
      return `${source}:${pos.line}:${pos.col}`;
    }
  }
  return undefined;
}

/** `spec.nodes.workers[0].os` from a path array. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}
