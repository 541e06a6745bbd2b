// `--fix`: write the placement each pod template lacks (suggest.ts decides
// what) as minimal text insertions, then check the result: it must parse and
// leave nothing for the placement fixer to do. When an insertion cannot be
// placed (a `tolerations:` left empty, say) the file is rewritten through the
// yaml Document API instead, which keeps comments and order but may
// normalise indentation; the fix says so.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import { isMap, isScalar, isSeq, parseAllDocuments, type Document, type YAMLMap } from 'yaml';
import { WINDOWS_TAINT } from './cluster.js';
import { analyse, type LintOptions } from './engine.js';
import type { ParsedFile, SourceText } from './source.js';
import { placementFix, type PlacementFix } from './suggest.js';
import type { TemplateContext } from './rules/types.js';
import {
  appendItem,
  applyInsertions,
  collectionAt,
  detectStyle,
  insertEntry,
  type EditValue,
  type Insertion,
  type Style,
} from './yaml-edit.js';
import { newShapeErrors } from './fix-check.js';
import { toleratesTaint } from './placement.js';
import { asMap, stringEntries, type JsonMap, type NodePath } from './values.js';

export interface FileFix {
  readonly path: string;
  readonly before: string;
  readonly after: string;
  /** Pod templates that got placement. */
  readonly templates: number;
  /** The file was re-serialised by the yaml library rather than edited in place. */
  readonly reformatted: boolean;
}

interface PlannedFix {
  readonly ctx: TemplateContext;
  readonly fix: PlacementFix;
}

const TOLERATION: EditValue = {
  key: WINDOWS_TAINT.key,
  operator: 'Equal',
  value: WINDOWS_TAINT.value,
  effect: WINDOWS_TAINT.effect,
};

/** The entries a fix adds to the pod spec, in the order they are written. */
function entriesOf(fix: PlacementFix): { key: string; value: EditValue; list?: true }[] {
  const out: { key: string; value: EditValue; list?: true }[] = [];
  if (fix.osName) out.push({ key: 'os', value: { name: fix.os } });
  if (fix.runtimeClass !== undefined) out.push({ key: 'runtimeClassName', value: fix.runtimeClass });
  if (fix.nodeSelector) out.push({ key: 'nodeSelector', value: { 'kubernetes.io/os': fix.os } });
  if (fix.toleration) out.push({ key: 'tolerations', value: TOLERATION, list: true });
  return out;
}

function pairValue(map: YAMLMap, key: string): { found: boolean; value: unknown } {
  const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
  return { found: pair !== undefined, value: pair?.value };
}

/** Insertions that add `key: value` under `map`, merging into maps that already exist. */
function ensure(
  text: string,
  map: YAMLMap,
  key: string,
  value: EditValue,
  list: boolean,
  style: Style,
): Insertion[] | undefined {
  const existing = pairValue(map, key);
  if (!existing.found) {
    const ins = insertEntry(text, map, key, list ? [value] : value, style);
    return ins === undefined ? undefined : [ins];
  }
  if (list) {
    if (!isSeq(existing.value)) return undefined;
    const ins = appendItem(text, existing.value, value, style);
    return ins === undefined ? undefined : [ins];
  }
  if (typeof value === 'string' || Array.isArray(value) || !isMap(existing.value)) return undefined;
  const out: Insertion[] = [];
  for (const [k, v] of Object.entries(value as Record<string, EditValue>)) {
    const inner = ensure(text, existing.value, k, v, false, style);
    if (inner === undefined) return undefined;
    out.push(...inner);
  }
  return out;
}

function textEdits(file: ParsedFile, planned: readonly PlannedFix[], style: Style): string | undefined {
  const insertions: Insertion[] = [];
  for (const { ctx, fix } of planned) {
    const spec = collectionAt(ctx.template.object.doc, ctx.template.specPath);
    if (!isMap(spec)) return undefined;
    for (const entry of entriesOf(fix)) {
      const ins = ensure(file.text, spec, entry.key, entry.value, entry.list === true, style);
      if (ins === undefined) return undefined;
      insertions.push(...ins);
    }
  }
  return applyInsertions(file.text, insertions);
}

/** The Document API route: set each value and re-serialise every document of the file. */
function documentEdits(file: ParsedFile, planned: readonly PlannedFix[]): string {
  // The text parseSource parsed (quoted-scalar tabs made spaces, if it had to).
  const docs = parseAllDocuments(file.text, { version: '1.1' }) as Document.Parsed[];
  for (const { ctx, fix } of planned) {
    const index = file.documents.find((d) => d.doc === ctx.template.object.doc)?.index;
    const doc = index === undefined ? undefined : docs[index];
    if (doc === undefined) continue;
    const base: NodePath = ctx.template.specPath;
    for (const entry of entriesOf(fix)) {
      const path = [...base, entry.key];
      if (entry.list === true) {
        const seq: unknown = doc.getIn(path, true);
        if (isSeq(seq)) seq.add(doc.createNode(entry.value));
        else doc.setIn(path, doc.createNode([entry.value]));
      } else if (typeof entry.value === 'string') {
        doc.setIn(path, entry.value);
      } else {
        setMap(doc, path, entry.value as Record<string, EditValue>);
      }
    }
  }
  return docs.map((d) => d.toString({ lineWidth: 0 })).join('');
}

/** Merge keys into the map at `path`, or create it when missing or empty (`nodeSelector:`). */
function setMap(doc: Document.Parsed, path: NodePath, value: Record<string, EditValue>): void {
  const existing: unknown = doc.getIn(path, true);
  if (isMap(existing)) {
    for (const [k, v] of Object.entries(value)) doc.setIn([...path, k], doc.createNode(v));
  } else if (existing === undefined || (isScalar(existing) && existing.value === null)) {
    // setIn through a missing map makes a YAML 1.1 `!!omap`, not a plain map: create the map whole.
    doc.setIn(path, doc.createNode(value));
  } else {
    throw new Error(`${path.join('.')} is not a map`);
  }
}

function rewrite(file: ParsedFile, planned: readonly PlannedFix[]): string | undefined {
  try {
    return documentEdits(file, planned);
  } catch {
    // A value of the wrong type in the way (`os: linux`): leave the file to the user.
    return undefined;
  }
}

/** A template's identity across the original and the fixed text: its document and spec path. */
function templateKey(ctx: TemplateContext): string {
  const doc = ctx.template.object.file.documents.find((d) => d.doc === ctx.template.object.doc)?.index;
  return `${String(doc)}:${ctx.template.specPath.join('/')}`;
}

/** The fixed pod spec carries what the fix meant, where the scheduler and the API server read it. */
function applied(fix: PlacementFix, spec: JsonMap): boolean {
  if (fix.osName && asMap(spec['os'])?.['name'] !== fix.os) return false;
  if (fix.nodeSelector && stringEntries(spec['nodeSelector'])['kubernetes.io/os'] !== fix.os) return false;
  if (fix.runtimeClass !== undefined && spec['runtimeClassName'] !== fix.runtimeClass) return false;
  return !fix.toleration || toleratesTaint(spec);
}

/**
 * The fixed text, parsed and linted again: it parses, leaves nothing for the
 * placement fixer, every planned template carries its fix where Kubernetes
 * reads it, and no placement field got a shape the API would not accept.
 */
async function settled(
  path: string,
  text: string,
  planned: readonly PlannedFix[],
  options: LintOptions,
): Promise<boolean> {
  const analysis = await analyse([{ path, text }], options);
  if (analysis.files.some((f) => f.syntaxErrors.length > 0)) return false;
  if (analysis.templates.some((t) => placementFix(t) !== undefined)) return false;
  const fixed = new Map(analysis.templates.map((t) => [templateKey(t), t.spec]));
  return planned.every(({ ctx, fix }) => {
    const spec = fixed.get(templateKey(ctx));
    return spec !== undefined && applied(fix, spec) && newShapeErrors(ctx.spec, spec).length === 0;
  });
}

/** Fixes for every input that needs one; inputs with syntax errors are left alone. */
export async function fixSources(sources: readonly SourceText[], options: LintOptions = {}): Promise<FileFix[]> {
  const analysis = await analyse(sources, options);
  const fixes: FileFix[] = [];
  for (const file of analysis.files) {
    if (file.syntaxErrors.length > 0) continue;
    const planned = analysis.templates
      .filter((t) => t.template.object.file === file)
      .map((ctx) => ({ ctx, fix: placementFix(ctx) }))
      .filter((p): p is PlannedFix => p.fix !== undefined);
    if (planned.length === 0) continue;
    const style = detectStyle(file.text, /^\s*[{[]/.test(file.text));
    const edited = textEdits(file, planned, style);
    if (edited !== undefined && (await settled(file.path, edited, planned, options))) {
      fixes.push({
        path: file.path,
        before: file.source,
        after: edited,
        templates: planned.length,
        reformatted: false,
      });
      continue;
    }
    const rewritten = rewrite(file, planned);
    if (rewritten !== undefined && (await settled(file.path, rewritten, planned, options))) {
      fixes.push({
        path: file.path,
        before: file.source,
        after: rewritten,
        templates: planned.length,
        reformatted: true,
      });
    }
  }
  return fixes;
}

/** A unified diff of one fix, paths as `a/PATH` and `b/PATH` like git. */
export function unifiedDiff(fix: FileFix): string {
  const name = fix.path.replace(/^\.?\//, '');
  return createTwoFilesPatch(`a/${name}`, `b/${name}`, fix.before, fix.after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
}
