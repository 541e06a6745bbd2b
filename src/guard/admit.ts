// The two admission decisions, made by lint itself: the object goes through
// lint's analysis (same template discovery, image OS resolution and rules),
// `mutate` turns lint's placement fix into a JSON Patch, `validate` denies
// with lint's messages. One source of truth for what "right" means.
import type { LintCluster } from '../lint/cluster.js';
import { analyseFiles, findingsOf } from '../lint/engine.js';
import { sourceFromObject } from '../lint/source.js';
import type { ImageOsResolver } from '../lint/image-os.js';
import { placementFix } from '../lint/suggest.js';
import type { JsonMap } from '../lint/values.js';
import { placementPatch, type AddOp } from './patch.js';
import type { Verdict } from './review.js';

export interface AdmitContext {
  readonly resolver: ImageOsResolver;
  readonly cluster: LintCluster | undefined;
  /** The resolver for one object in its namespace, e.g. with its pull secrets' credentials; default `resolver`. */
  readonly resolverFor?: (namespace: string | undefined, object: JsonMap) => Promise<ImageOsResolver>;
}

/** Rules the validator leaves to the mutator: it runs first and adds what they ask for. */
const LEFT_TO_MUTATE = new Set(['placement/missing-os', 'placement/os-name-missing', 'placement/missing-toleration']);

async function analyseObject(object: JsonMap, ctx: AdmitContext, namespace: string | undefined) {
  const resolver = ctx.resolverFor === undefined ? ctx.resolver : await ctx.resolverFor(namespace, object);
  // The object is already parsed: lint analyses it as it would a manifest file, without a print and re-parse.
  return analyseFiles([sourceFromObject('<admission>', object)], {
    resolver,
    ...(ctx.cluster === undefined ? {} : { cluster: ctx.cluster }),
  });
}

export async function mutate(object: JsonMap | undefined, ctx: AdmitContext, namespace?: string): Promise<Verdict> {
  if (object === undefined) return { allowed: true };
  const analysis = await analyseObject(object, ctx, namespace);
  const patch: AddOp[] = [];
  const warnings: string[] = [];
  for (const t of analysis.templates) {
    const fix = placementFix(t);
    if (fix === undefined) continue;
    patch.push(...placementPatch(t.spec, t.template.specPath, fix));
    const source = t.osSource === undefined ? 'no image OS known: Linux assumed' : `image OS from ${t.osSource}`;
    warnings.push(`kubemix guard placed ${t.template.object.kind} on ${fix.os} (${source})`);
  }
  return { allowed: true, patch, warnings };
}

export async function validate(object: JsonMap | undefined, ctx: AdmitContext, namespace?: string): Promise<Verdict> {
  if (object === undefined) return { allowed: true };
  const analysis = await analyseObject(object, ctx, namespace);
  const findings = findingsOf(analysis).filter((f) => !LEFT_TO_MUTATE.has(f.rule) && !f.rule.startsWith('input/'));
  const errors = findings.filter((f) => f.severity === 'error');
  const warnings = findings.filter((f) => f.severity === 'warning').map((f) => `${f.rule}: ${f.message}`);
  if (errors.length === 0) return { allowed: true, warnings };
  const message = errors
    .map((f) => `${f.rule}: ${f.container === undefined ? '' : `container ${f.container}: `}${f.message}`)
    .join('; ');
  return { allowed: false, message, warnings };
}
