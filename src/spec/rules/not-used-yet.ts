// No field is silently ignored: a field the spec accepts but no plan step
// reads yet (for this cluster) is reported as a warning whenever the spec
// sets it. Narrow or remove an entry in the change that makes the plan use it.
import { valueAt } from '../schema-diagnostics.js';
import { warning, type Rule, type RuleContext } from './context.js';

interface Unused {
  readonly path: readonly string[];
  readonly why: string;
  /** Unused only for some clusters; absent: unused for all. */
  readonly unusedWhen?: (ctx: RuleContext) => boolean;
}

// Empty today: every field the schema accepts is read by some plan step
// (the field-effect test proves it). A field added ahead of its use goes here.
export const NOT_USED_YET: readonly Unused[] = [];

export const notUsedYet: Rule = (ctx) =>
  NOT_USED_YET.filter((f) => valueAt(ctx.document, f.path) !== undefined && (f.unusedWhen?.(ctx) ?? true)).map((f) =>
    warning('spec.not-used-yet', f.path.join('.'), `accepted, not used yet: ${f.why}`),
  );
