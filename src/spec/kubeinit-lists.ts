// The two list forms Kubeinit's command-line specs take: its own
// `[[k=v,k=v],[k=v]]` and the JSON/YAML list of maps its README now uses
// (`hypervisor_hosts_spec='[{"ansible_host":"nyctea"}]'`), each into a list
// of maps, or a diagnostic naming the flag.
import type { Diagnostic } from '../errors.js';
import { YAML } from './yaml-lib.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; diagnostics: Diagnostic[] };

export const fail = (
  code: string,
  path: string,
  message: string,
  hint?: string,
): { ok: false; diagnostics: Diagnostic[] } => ({
  ok: false,
  diagnostics: [{ code, severity: 'error', path, message, ...(hint === undefined ? {} : { hint }) }],
});

/** Kubeinit's `[[k=v,k=v],[k=v]]` into a list of maps. */
export function parseBracketList(
  text: string,
  path: string,
  code: string,
  example: string,
): Parsed<Record<string, string>[]> {
  const match = /^\[\s*(\[.*\])\s*\]$/s.exec(text);
  if (match === null) return fail(code, path, `"${text}" is not a Kubeinit list such as ${example}`);
  const inner = match[1] ?? '';
  const entries: Record<string, string>[] = [];
  for (const chunk of inner.split(/\]\s*,\s*\[/)) {
    const body = chunk.replace(/^\[/, '').replace(/\]$/, '');
    const entry: Record<string, string> = {};
    for (const pair of body.split(',').filter((p) => p.trim() !== '')) {
      const eq = pair.indexOf('=');
      if (eq < 1) return fail(code, `${path}[${entries.length}]`, `"${pair.trim()}" is not key=value`);
      entry[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
    entries.push(entry);
  }
  return { ok: true, value: entries };
}

/** A JSON/YAML list of maps (`[{when_group: compute_nodes, os: windows}]`). */
export function parseYamlList(
  text: string,
  path: string,
  code: string,
  example: string,
): Parsed<Record<string, unknown>[]> {
  let value: unknown;
  try {
    value = YAML.parse(text, { maxAliasCount: 10 });
  } catch (error) {
    return fail(
      code,
      path,
      `not valid JSON/YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  if (!Array.isArray(value) || value.some((v) => v === null || typeof v !== 'object' || Array.isArray(v))) {
    return fail(code, path, `must be a list of maps, e.g. ${example}`);
  }
  return { ok: true, value: value as Record<string, unknown>[] };
}
