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
    out.push(numberDiagnostic(issue, schema, input) ?? toDiagnostic(issue, input));
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

/**
 * A number field's every problem in one sentence with the field's range: YAML reads `1e400` and `.inf` as
 * infinity and `.nan` as NaN (which JSON, and so zod's own message, prints as null), and a number past
 * 2^53 fails two checks at once — each would otherwise be worded by zod ("expected number, got number null").
 */
function numberDiagnostic(issue: Issue, schema: AnySchema, input: unknown): Diagnostic | undefined {
  const value = valueAt(input, issue.path);
  if (typeof value !== 'number') return undefined;
  if (issue.code !== 'invalid_type' && issue.code !== 'too_big' && issue.code !== 'too_small') return undefined;
  const field = schemaAt(schema, issue.path).find(isNumberSchema);
  if (field === undefined) return undefined;
  const wanted = `${field.isInt === true ? 'a whole number' : 'a number'}${rangeOf(field)}`;
  const path = formatPath(issue.path);
  if (Number.isNaN(value))
    return { code: 'schema.value', severity: 'error', path, message: `expected ${wanted}, got .nan (not a number)` };
  if (!Number.isFinite(value))
    return {
      code: 'schema.value',
      severity: 'error',
      path,
      message: `out of range: expected ${wanted}, got a number ${value > 0 ? 'too large' : 'too far below zero'} to hold (YAML reads it as ${value > 0 ? '' : '-'}infinity)`,
    };
  const lost = Number.isSafeInteger(value) || !Number.isInteger(value) ? '' : ' (past 2^53: its last digits are lost)';
  return { code: 'schema.value', severity: 'error', path, message: `expected ${wanted}, got ${String(value)}${lost}` };
}

interface NumberSchema {
  readonly isInt?: boolean;
  readonly minValue?: number | null;
  readonly maxValue?: number | null;
}

function isNumberSchema(schema: AnySchema): schema is AnySchema & NumberSchema {
  return (schema._zod.def as { type: string }).type === 'number';
}

/** ` from 1 to 99`, ` at most 99`, … from the schema's own bounds (zod reports ±2^53 for a bare int). */
function rangeOf(field: NumberSchema): string {
  const bounded = (n: number | null | undefined): n is number =>
    typeof n === 'number' && Number.isFinite(n) && Math.abs(n) < Number.MAX_SAFE_INTEGER;
  const { minValue: min, maxValue: max } = field;
  if (bounded(min) && bounded(max)) return ` from ${min} to ${max}`;
  if (bounded(max)) return ` at most ${max}`;
  if (bounded(min)) return ` of at least ${min}`;
  return '';
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
  return [...new Set(schemaAt(schema, path).flatMap((s) => objectKeys(s)))].sort();
}

/** Every (unwrapped) schema that can stand at `path`: several under a union. */
function schemaAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
  let current: AnySchema[] = [schema];
  for (const part of path) current = current.flatMap((s) => childSchemas(unwrap(s), part));
  return current.map(unwrap);
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
