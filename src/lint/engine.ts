// The lint pipeline: parse every input, find objects and pod templates,
// resolve image OSes once, run template rules then cross-object rules, and
// locate each hit in its file. Pure apart from the resolver it is given.
import type { LintCluster } from './cluster.js';
import { isMixed } from './cluster.js';
import {
  heuristicResolver,
  resolveImages,
  type ImageOs,
  type ImageOsResolver,
  type OsSource,
  type PodOs,
} from './image-os.js';
import { locate } from './locate.js';
import { objectId, objectsOf, type ManifestObject } from './objects.js';
import { analysePlacement } from './placement.js';
import { anyHostProcess, containersOf } from './pod.js';
import { SET_RULES, TEMPLATE_RULES, UNPARSEABLE } from './rules/index.js';
import type { RuleHit, RuleMeta, TemplateContext } from './rules/types.js';
import { parseSource, type ParsedFile, type SourceText } from './source.js';
import { templateOf, type PodTemplate } from './templates.js';
import { sortFindings, type Finding } from './findings.js';
import type { NodePath } from './values.js';

export interface LintOptions {
  /** The target cluster; without it lint assumes a mixed cluster and skips the rules that need builds or RuntimeClasses. */
  readonly cluster?: LintCluster;
  /** Defaults to name heuristics only. */
  readonly resolver?: ImageOsResolver;
}

export interface Analysis {
  readonly files: readonly ParsedFile[];
  readonly objects: readonly ManifestObject[];
  readonly templates: readonly TemplateContext[];
  readonly cluster: LintCluster | undefined;
}

export interface LintReport {
  readonly files: readonly string[];
  readonly templates: number;
  readonly findings: readonly Finding[];
}

export async function analyse(sources: readonly SourceText[], options: LintOptions = {}): Promise<Analysis> {
  return analyseFiles(sources.map(parseSource), options);
}

/** The same analysis for inputs already parsed (see sourceFromObject). */
export async function analyseFiles(files: readonly ParsedFile[], options: LintOptions = {}): Promise<Analysis> {
  const objects = files.flatMap(objectsOf);
  const templates = objects.map(templateOf).filter((t): t is PodTemplate => t !== undefined);
  const containers = templates.map((t) => containersOf(t.spec));
  const images = containers
    .flat()
    .map((c) => c.image)
    .filter((i): i is string => i !== undefined);
  const resolved = await resolveImages(images, options.resolver ?? heuristicResolver);
  const contexts = templates.map((t, i) => contextOf(t, containers[i] ?? [], resolved, options.cluster));
  return { files, objects, templates: contexts, cluster: options.cluster };
}

const SOURCE_RANK: Readonly<Record<OsSource, number>> = { heuristic: 0, cache: 1, registry: 2 };

function contextOf(
  template: PodTemplate,
  containers: TemplateContext['containers'],
  images: ReadonlyMap<string, ImageOs>,
  cluster: LintCluster | undefined,
): TemplateContext {
  const placement = analysePlacement(template.spec, cluster);
  const imageOs: TemplateContext['imageOs'] = (c) => (c.image === undefined ? undefined : images.get(c.image));
  const known = containers.map(imageOs).filter((i): i is ImageOs => i !== undefined);
  const hostProcess = anyHostProcess(template.spec, containers);
  let os: PodOs | undefined = placement.os;
  let osSource: OsSource | undefined;
  if (os === undefined && !placement.conflict) {
    const oses = new Set(known.map((k) => k.os));
    if (oses.size === 1) {
      os = known[0]?.os;
      // A conclusion is only as sure as its least sure input.
      osSource = known.reduce<OsSource>((s, k) => (SOURCE_RANK[k.source] < SOURCE_RANK[s] ? k.source : s), 'registry');
    } else if (oses.size === 0 && hostProcess) {
      os = 'windows';
    }
  }
  return {
    template,
    spec: template.spec,
    placement,
    containers,
    imageOs,
    os,
    osSource,
    hostProcess,
    cluster,
    mixed: isMixed(cluster),
  };
}

export function findingsOf(analysis: Analysis): Finding[] {
  const findings: Finding[] = [];
  for (const file of analysis.files) {
    for (const e of file.syntaxErrors) {
      findings.push({
        rule: UNPARSEABLE.id,
        severity: UNPARSEABLE.severity,
        file: file.path,
        line: e.line,
        column: e.column,
        message: e.message,
        hint: UNPARSEABLE.hint,
      });
    }
  }
  const active = (rule: RuleMeta): boolean => !rule.needsCluster || analysis.cluster !== undefined;
  for (const ctx of analysis.templates) {
    for (const rule of TEMPLATE_RULES) {
      if (!active(rule)) continue;
      for (const hit of rule.check(ctx))
        findings.push(toFinding(rule, hit, ctx.template.object, [...ctx.template.specPath, ...hit.path]));
    }
  }
  const setContext = { objects: analysis.objects, templates: analysis.templates, cluster: analysis.cluster };
  for (const rule of SET_RULES) {
    if (!active(rule)) continue;
    for (const hit of rule.check(setContext)) findings.push(toFinding(rule, hit, hit.object, hit.path));
  }
  return sortFindings(findings);
}

function toFinding(rule: RuleMeta, hit: RuleHit, object: ManifestObject, path: NodePath): Finding {
  const pos = locate(object.doc, path, object.file.lineCounter);
  return {
    rule: rule.id,
    severity: rule.severity,
    file: object.file.path,
    line: pos.line,
    column: pos.column,
    object: objectId(object),
    ...(hit.container === undefined ? {} : { container: hit.container }),
    message: hit.message,
    hint: hit.hint ?? rule.hint,
    ...(hit.osSource === undefined ? {} : { osSource: hit.osSource }),
  };
}

export async function lintSources(sources: readonly SourceText[], options: LintOptions = {}): Promise<LintReport> {
  const analysis = await analyse(sources, options);
  return { files: sources.map((s) => s.path), templates: analysis.templates.length, findings: findingsOf(analysis) };
}
