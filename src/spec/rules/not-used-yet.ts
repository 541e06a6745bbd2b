// No field is silently ignored: a field the spec accepts but no plan step
// reads yet is reported as a warning whenever the spec sets it. Remove a
// path from this list in the change that makes the plan use it.
import { valueAt } from '../schema-diagnostics.js';
import { warning, type Rule } from './context.js';

export const NOT_USED_YET: readonly { readonly path: readonly string[]; readonly why: string }[] = [
  { path: ['spec', 'services', 'dhcp'], why: 'the services node is not rendered yet' },
  { path: ['spec', 'services', 'registry'], why: 'the services node is not rendered yet' },
  { path: ['spec', 'proxy'], why: 'no download or host-prep step is planned yet' },
  { path: ['spec', 'mirrors'], why: 'no image or artifact download is planned yet' },
];

export const notUsedYet: Rule = (ctx) =>
  NOT_USED_YET.filter((f) => valueAt(ctx.document, f.path) !== undefined).map((f) =>
    warning('spec.not-used-yet', f.path.join('.'), `accepted, not used yet: ${f.why}`),
  );
