// Reading manifest text into YAML documents that remember where every node
// came from. One file may hold many documents (`---`, Helm output); a syntax
// error in one document is reported with its line and column and the other
// documents of the file are still read.
import { Document, LineCounter, parseAllDocuments, visit, type Alias, type Node } from 'yaml';
import { untabQuotedContinuations } from './quoted-tabs.js';

export interface SourceText {
  /** The name findings use: the path as the user gave it, or `<stdin>`. */
  readonly path: string;
  readonly text: string;
}

export interface SyntaxProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export interface ParsedFile {
  readonly path: string;
  /** The text the documents were parsed from: `source`, or `source` with quoted-scalar tabs made spaces (quoted-tabs.ts). */
  readonly text: string;
  /** The input as read. */
  readonly source: string;
  readonly lineCounter: LineCounter;
  /**
   * Documents without syntax errors, with their index in the file and their
   * content as plain data (`value`, aliases resolved). For content that came
   * already parsed `doc` is empty and findings point at the start.
   */
  readonly documents: readonly { readonly index: number; readonly doc: Document.Parsed; readonly value?: unknown }[];
  readonly syntaxErrors: readonly SyntaxProblem[];
}

export function parseSource(source: SourceText): ParsedFile {
  // YAML 1.1 because kubectl decodes manifests with a YAML 1.1 parser
  // (`hostNetwork: yes` is true there).
  let lineCounter = new LineCounter();
  let all = parseAllDocuments(source.text, { lineCounter, version: '1.1', prettyErrors: true });
  let text = source.text;
  const untabbed = untabQuotedContinuations(source.text);
  if (untabbed !== source.text && errorCount(all) > 0) {
    // The same lines: only white space that line folding drops changed.
    const retryCounter = new LineCounter();
    const retry = parseAllDocuments(untabbed, { lineCounter: retryCounter, version: '1.1', prettyErrors: true });
    if (errorCount(retry) < errorCount(all)) {
      all = retry;
      lineCounter = retryCounter;
      text = untabbed;
    }
  }
  const documents: { index: number; doc: Document.Parsed; value: unknown }[] = [];
  const syntaxErrors: SyntaxProblem[] = [];
  all.forEach((doc, index) => {
    if (doc.errors.length === 0) {
      const data = plainData(doc, lineCounter);
      if ('problem' in data) syntaxErrors.push(data.problem);
      else documents.push({ index, doc, value: data.value });
      return;
    }
    for (const error of doc.errors) {
      const pos = lineCounter.linePos(error.pos[0]);
      syntaxErrors.push({ line: pos.line, column: pos.col, message: firstLine(error.message) });
    }
  });
  return { path: source.path, text, source: source.text, lineCounter, documents, syntaxErrors };
}

function errorCount(docs: readonly Document.Parsed[]): number {
  return docs.reduce((n, d) => n + d.errors.length, 0);
}

/**
 * How many times aliases may expand while a document is turned into data. A few
 * anchors reused a few times is what real manifests do; nested aliases that
 * multiply (a "billion laughs" file of a few hundred bytes) would take
 * gigabytes, and the yaml library stops them at this count.
 */
export const MAX_ALIAS_EXPANSIONS = 1000;

/** The document as plain data, or why it cannot be: an alias without an anchor, or aliases that expand too far. */
function plainData(doc: Document.Parsed, lineCounter: LineCounter): { value: unknown } | { problem: SyntaxProblem } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_EXPANSIONS }) };
  } catch (error) {
    const aliases: Alias[] = [];
    visit(doc, { Alias: (_key, node) => void aliases.push(node) });
    const unresolved = aliases.find((a) => a.resolve(doc) === undefined);
    const at = unresolved ?? aliases[0];
    const offset = (at as Node | undefined)?.range?.[0] ?? doc.range[0];
    const pos = lineCounter.linePos(offset);
    const message =
      unresolved !== undefined
        ? `alias *${unresolved.source} has no anchor &${unresolved.source} before it`
        : aliases.length > 0
          ? `aliases expand more than ${MAX_ALIAS_EXPANSIONS} times (an alias bomb?); write the values out or use fewer nested aliases`
          : `cannot be read as data: ${firstLine(error instanceof Error ? error.message : String(error))}`;
    return { problem: { line: pos.line, column: pos.col, message } };
  }
}

/** The yaml library appends " at line L, column C:" and a source excerpt; findings carry those separately. */
function firstLine(message: string): string {
  const line = message.split('\n')[0] ?? message;
  return line.replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * An object that is already parsed (an AdmissionReview's object) as a lint
 * input, without printing and re-parsing it: findings then point at line 1.
 */
export function sourceFromObject(path: string, object: unknown): ParsedFile {
  // No YAML node tree: building one per admission request costs more than the rules.
  const doc = new Document() as unknown as Document.Parsed;
  return {
    path,
    text: '',
    source: '',
    lineCounter: new LineCounter(),
    documents: [{ index: 0, doc, value: object }],
    syntaxErrors: [],
  };
}
