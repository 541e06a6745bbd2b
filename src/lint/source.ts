// Reading manifest text into YAML documents that remember where every node
// came from. One file may hold many documents (`---`, Helm output); a syntax
// error in one document is reported with its line and column and the other
// documents of the file are still read.
import { Document, LineCounter, parseAllDocuments } from 'yaml';

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
  readonly text: string;
  readonly lineCounter: LineCounter;
  /**
   * Documents without syntax errors, with their index in the file; `value`
   * when the content came already parsed (then `doc` is empty and findings
   * point at the start).
   */
  readonly documents: readonly { readonly index: number; readonly doc: Document.Parsed; readonly value?: unknown }[];
  readonly syntaxErrors: readonly SyntaxProblem[];
}

export function parseSource(source: SourceText): ParsedFile {
  const lineCounter = new LineCounter();
  // YAML 1.1 because kubectl decodes manifests with a YAML 1.1 parser
  // (`hostNetwork: yes` is true there).
  const all = parseAllDocuments(source.text, { lineCounter, version: '1.1', prettyErrors: true });
  const documents: { index: number; doc: Document.Parsed }[] = [];
  const syntaxErrors: SyntaxProblem[] = [];
  all.forEach((doc, index) => {
    if (doc.errors.length === 0) {
      documents.push({ index, doc });
      return;
    }
    for (const error of doc.errors) {
      const pos = lineCounter.linePos(error.pos[0]);
      syntaxErrors.push({ line: pos.line, column: pos.col, message: firstLine(error.message) });
    }
  });
  return { path: source.path, text: source.text, lineCounter, documents, syntaxErrors };
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
  return { path, text: '', lineCounter: new LineCounter(), documents: [{ index: 0, doc, value: object }], syntaxErrors: [] };
}
