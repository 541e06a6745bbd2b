// No field is silently ignored: a field the spec accepts but no plan step
// reads yet (for this cluster) is reported as a warning whenever the spec
// sets it. Narrow or remove an entry in the change that makes the plan use it.
import { valueAt } from '../schema-diagnostics.js';
import { hasWindows, warning, type Rule, type RuleContext } from './context.js';

interface Unused {
  readonly path: readonly string[];
  readonly why: string;
  /** Unused only for some clusters; absent: unused for all. */
  readonly unusedWhen?: (ctx: RuleContext) => boolean;
}

export const NOT_USED_YET: readonly Unused[] = [
  { path: ['spec', 'services', 'dhcp'], why: 'the services node is not rendered yet' },
  { path: ['spec', 'services', 'registry'], why: 'the services node is not rendered yet' },
  { path: ['spec', 'proxy'], why: 'only Windows node downloads use it so far, and this cluster has no Windows node', unusedWhen: (ctx) => !hasWindows(ctx) },
  { path: ['spec', 'mirrors'], why: 'only Windows node downloads and image pulls use it so far, and this cluster has no Windows node', unusedWhen: (ctx) => !hasWindows(ctx) },
];

export const notUsedYet: Rule = (ctx) =>
  NOT_USED_YET.filter((f) => valueAt(ctx.document, f.path) !== undefined && (f.unusedWhen?.(ctx) ?? true)).map((f) =>
    warning('spec.not-used-yet', f.path.join('.'), `accepted, not used yet: ${f.why}`),
  );
