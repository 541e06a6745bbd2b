// The Calico CRDs' OpenAPI (test/fixtures/calico/crd-schemas.json: taken from
// projectcalico/calico manifests/operator-crds.yaml at the tag it names, by
// tools/calico-crd-fixture.mjs) as ajv validators. Fields the schema does not
// declare are errors, as `kubectl apply --server-side` (field validation
// Strict) makes them.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { repoPath } from './cli.js';

type Schema = Record<string, unknown>;

interface Fixture {
  readonly source: { readonly repository: string; readonly path: string; readonly tag: string };
  readonly schemas: Record<string, { readonly group: string; readonly version: string; readonly schema: Schema }>;
}

export const CALICO_CRDS = JSON.parse(
  readFileSync(repoPath('test', 'fixtures', 'calico', 'crd-schemas.json'), 'utf8'),
) as Fixture;

/** additionalProperties: false wherever the schema lists properties and does not keep unknown fields. */
function closed(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(closed);
  if (s === null || typeof s !== 'object') return s;
  const out = Object.fromEntries(Object.entries(s as Schema).map(([k, v]) => [k, closed(v)]));
  if (
    out['properties'] !== undefined &&
    out['additionalProperties'] === undefined &&
    out['x-kubernetes-preserve-unknown-fields'] !== true
  )
    out['additionalProperties'] = false;
  return out;
}

/** Go's regexp syntax as the CRDs use it: a leading `(?i)` is JavaScript's `i` flag. */
const goRegExp = Object.assign(
  (pattern: string, u: string): RegExp =>
    pattern.startsWith('^(?i)') ? new RegExp(`^${pattern.slice(5)}`, `${u}i`) : new RegExp(pattern, u),
  { code: 'goRegExp' },
);

const ajv = new Ajv.default({ allErrors: true, strict: false, validateFormats: false, code: { regExp: goRegExp } });
const validators = new Map(
  Object.entries(CALICO_CRDS.schemas).map(([kind, s]) => [kind, ajv.compile(closed(s.schema) as Schema)]),
);

/** Errors of one object against its CRD's schema (apiVersion must be the CRD's group/version); [] when valid. */
export function crdErrors(object: Record<string, unknown>): string[] {
  const kind = String(object['kind']);
  const crd = CALICO_CRDS.schemas[kind];
  const validate = validators.get(kind);
  if (crd === undefined || validate === undefined) return [`no CRD schema for ${kind}`];
  const api = `${crd.group}/${crd.version}`;
  const errors = object['apiVersion'] === api ? [] : [`apiVersion ${String(object['apiVersion'])}, want ${api}`];
  if (!validate(object))
    errors.push(
      ...(validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`),
    );
  return errors;
}
