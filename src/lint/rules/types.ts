// The shape of a lint rule. A rule is data (id, severity, why, hint) plus a
// pure check; the engine turns hits into located findings.
import type { Severity } from '../../errors.js';
import type { LintCluster } from '../cluster.js';
import type { ImageOs, OsSource, PodOs } from '../image-os.js';
import type { ManifestObject } from '../objects.js';
import type { Placement } from '../placement.js';
import type { ContainerRef } from '../pod.js';
import type { PodTemplate } from '../templates.js';
import type { JsonMap, NodePath } from '../values.js';

export interface RuleMeta {
  /** `group/name`, stable: users suppress and search by it. */
  readonly id: string;
  readonly severity: Severity;
  /** One line: what breaks if this is ignored. */
  readonly why: string;
  /** What to change, when a hit has nothing more specific. */
  readonly hint: string;
  /** Needs a cluster description (Windows builds, RuntimeClasses); skipped without one. */
  readonly needsCluster: boolean;
  /** `--fix` repairs it. */
  readonly fixable: boolean;
}

export interface RuleHit {
  /** Where, from the rule's subject (the pod spec for template rules). */
  readonly path: NodePath;
  readonly message: string;
  readonly hint?: string;
  readonly container?: string;
  /** Set when the finding rests on an image's OS. */
  readonly osSource?: OsSource;
}

/** Everything template rules know about one pod template. */
export interface TemplateContext {
  readonly template: PodTemplate;
  readonly spec: JsonMap;
  readonly placement: Placement;
  readonly containers: readonly ContainerRef[];
  readonly imageOs: (container: ContainerRef) => ImageOs | undefined;
  /** The pod's OS: from its placement, else its images, else HostProcess (Windows). */
  readonly os: PodOs | undefined;
  /** Where `os` came from when it came from images. */
  readonly osSource: OsSource | undefined;
  readonly hostProcess: boolean;
  readonly cluster: LintCluster | undefined;
  readonly mixed: boolean;
}

export interface TemplateRule extends RuleMeta {
  readonly scope: 'template';
  check(ctx: TemplateContext): readonly RuleHit[];
}

export interface SetContext {
  readonly objects: readonly ManifestObject[];
  readonly templates: readonly TemplateContext[];
  readonly cluster: LintCluster | undefined;
}

export interface ObjectHit extends RuleHit {
  readonly object: ManifestObject;
}

/** Rules that look across objects (a Service and the pods it selects). `path` is from the document root. */
export interface SetRule extends RuleMeta {
  readonly scope: 'set';
  check(ctx: SetContext): readonly ObjectHit[];
}

/** Problems with the input itself; reported by the engine, exit code 2. */
export interface InputRule extends RuleMeta {
  readonly scope: 'input';
}

export type Rule = TemplateRule | SetRule | InputRule;

/** The OS source to attach to a hit that rests on the pod's OS. */
export function osSourceOf(ctx: TemplateContext): { osSource?: OsSource } {
  return ctx.osSource === undefined ? {} : { osSource: ctx.osSource };
}
