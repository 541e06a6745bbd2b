// Schema validation of a spec document: the parser generated from the zod
// schema (parser.generated.ts, no zod) for a spec it accepts, and zod itself
// only for one it does not, to decide and to word the errors. Loading zod and
// building the schema is most of what `kubemix validate` would otherwise cost.
import { createRequire } from 'node:module';
import type { ZodError } from 'zod';
import { INVALID, parseSpecDocument } from './parser.generated.js';
import type { ClusterSpecParsed } from './schema.js';
import type * as Schema from './schema.js';

export type SchemaResult =
  | { readonly success: true; readonly data: ClusterSpecParsed }
  | { readonly success: false; readonly error: ZodError; readonly schema: typeof Schema.clusterSpecSchema };

export function parseSpecSchema(document: unknown): SchemaResult {
  const fast: unknown = parseSpecDocument(document);
  if (fast !== INVALID) return { success: true, data: fast as ClusterSpecParsed };
  const { clusterSpecSchema } = loadSchema();
  const parsed = clusterSpecSchema.safeParse(document);
  return parsed.success
    ? { success: true, data: parsed.data }
    : { success: false, error: parsed.error, schema: clusterSpecSchema };
}

/**
 * The zod schema, loaded on first need. `require` of an ES module is synchronous
 * (Node >= 20.19 and 22.12, no warning), so readSpec stays a plain function.
 */
function loadSchema(): typeof Schema {
  return createRequire(import.meta.url)('./schema.js') as typeof Schema;
}
