// zod issues → Diagnostics with stable codes, spec paths and hints.
import type { z } from 'zod';
import type { Diagnostic } from '../errors.js';
import { didYouMean } from './suggest.js';
import { formatPath } from './yaml.js';

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;

export function issuesToDiagnostics(issues: readonly Issue[], schema: AnySchema, input: unknown): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path);
      for (const key of issue.keys) out.push(unknownKey([...issue.path, key], key, known));
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      out.push(...issuesToDiagnostics(issue.errors.flat(), schema, input));
      continue;
    }
    out.push(toDiagnostic(issue, input));
  }
  return dedupe(out);
}

function unknownKey(path: readonly PropertyKey[], key: string, known: readonly string[]): Diagnostic {
  const guess = didYouMean(key, known);
  return {
    code: 'schema.unknown-key',
    severity: 'error',
    path: formatPath(path),
    message: `unknown field "${key}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
    hint: known.length > 0 ? `fields allowed here: ${known.join(', ')}` : 'remove it',
  };
}

function toDiagnostic(issue: Issue, input: unknown): Diagnostic {
  const path = formatPath(issue.path);
  const present = valueAt(input, issue.path) !== undefined;
  if (issue.code === 'invalid_type' && !present) {
    return {
      code: 'schema.required',
      severity: 'error',
      path,
      message: `required field is missing (expected ${issue.expected})`,
    };
  }
  if (issue.code === 'invalid_type') {
    return {
      code: 'schema.type',
      severity: 'error',
      path,
      message: `expected ${issue.expected}, got ${describe(valueAt(input, issue.path))}`,
    };
  }
  if (issue.code === 'invalid_value') {
    const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ');
    return {
      code: 'schema.value',
      severity: 'error',
      path,
      message: `must be one of ${allowed}`,
      hint: hintFor(valueAt(input, issue.path), issue.values),
    };
  }
  if (issue.code === 'invalid_union') {
    return {
      code: 'schema.value',
      severity: 'error',
      path,
      message: issue.message,
      hint: 'infrastructure.driver must be "libvirt" or "existing"',
    };
  }
  return { code: 'schema.value', severity: 'error', path, message: issue.message };
}

function hintFor(value: unknown, allowed: readonly unknown[]): string {
  if (typeof value !== 'string') return `use one of the listed values`;
  const guess = didYouMean(value, allowed.map(String));
  return guess === undefined ? 'use one of the listed values' : `did you mean "${guess}"?`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

/** The field names the schema allows at `path` (for "did you mean"). */
function keysAt(schema: AnySchema, path: readonly PropertyKey[]): string[] {
  let current: AnySchema[] = [schema];
  for (const part of path) current = current.flatMap((s) => childSchemas(unwrap(s), part));
  return [...new Set(current.flatMap((s) => objectKeys(unwrap(s))))].sort();
}

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (def.innerType !== undefined) s = def.innerType;
    else if (def.type === 'pipe' && def.in !== undefined) s = def.in;
    else return s;
  }
}

function childSchemas(schema: AnySchema, part: PropertyKey): AnySchema[] {
  const def = schema._zod.def as {
    type: string;
    shape?: Record<string, AnySchema>;
    element?: AnySchema;
    options?: AnySchema[];
    valueType?: AnySchema;
  };
  if (def.type === 'object' && typeof part === 'string' && def.shape?.[part] !== undefined) return [def.shape[part]];
  if (def.type === 'array' && typeof part === 'number' && def.element !== undefined) return [def.element];
  if (def.type === 'record' && def.valueType !== undefined) return [def.valueType];
  if (def.type === 'union' && def.options !== undefined)
    return def.options.flatMap((o) => childSchemas(unwrap(o), part));
  return [];
}

function objectKeys(schema: AnySchema): string[] {
  const def = schema._zod.def as { type: string; shape?: Record<string, AnySchema>; options?: AnySchema[] };
  if (def.type === 'object' && def.shape !== undefined) return Object.keys(def.shape);
  if (def.type === 'union' && def.options !== undefined) return def.options.flatMap((o) => objectKeys(unwrap(o)));
  return [];
}

function dedupe(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return list.filter((d) => {
    const key = `${d.code}|${d.path}|${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
