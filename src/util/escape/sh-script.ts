// Shell scripts built so that a value can only ever be one inert word: the
// `shell` tagged template escapes every interpolation for the place it lands
// in the script, found by reading the template's own text as sh reads it
// (POSIX.1-2017 XCU 2.2 quoting, 2.3 token recognition, 2.7.4 here-documents):
//
//   unquoted              a safe word as it is, anything else one '…' word (shellQuote)
//   inside "…"            $ ` " \ backslash-escaped (XCU 2.2.3: the only specials there)
//   inside '…'            only a safe word; anything else is refused: a quoted program
//                         (awk, sed, grep's pattern, sh -c) would read the value in its
//                         own language, which no shell quoting protects
//   here-document body    as it is with a quoted delimiter (refused if a line of it is
//                         the delimiter), $ ` \ escaped with an unquoted one
//   comment               as it is, refused if it holds a line break
//
// A script piece made by `shell` (a ShellText) goes in as code, but only where a
// command may start (unquoted), never inside quotes. Numbers go in as written.
// So the only way to put text into a script as code is to build that text with
// `shell` too, or name a constant with `shellCode` (ESLint's kubemix/shell-code
// allows it a literal only): a hand-built quote around a value cannot be written.
import { UnrepresentableError, assertEncodable } from './errors.js';
import { shellQuote } from './sh.js';

/** Characters no POSIX shell gives a meaning to in a word (those Python's shlex.quote leaves bare). */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Script text made by `shell` (or a constant named by `shellCode`): code, not a value. */
export class ShellText {
  /** @internal use `shell` or `shellCode` */
  constructor(
    readonly text: string,
    /** Whether the text ends where a new command may start (no open quote, here-document or substitution). */
    readonly closed: boolean,
  ) {}

  toString(): string {
    return this.text;
  }
}

export type ShellValue = string | number | ShellText | readonly (string | number)[];

type Context =
  | { readonly kind: 'unquoted' | 'single' | 'double' | 'comment' }
  | { readonly kind: 'heredoc'; readonly delimiter: string; readonly quoted: boolean };

export class ShellTemplateError extends Error {
  constructor(message: string) {
    super(`shell template: ${message}`);
  }
}

interface Frame {
  /** What closes this frame: `)` of `$(`, `` ` ``, `"` or `}` of `${`. */
  readonly until: ')' | '`' | '"' | '}';
  depth: number;
}

interface PendingHeredoc {
  readonly delimiter: string;
  readonly quoted: boolean;
  readonly stripTabs: boolean;
}

/**
 * A reader of sh's quoting, fed the template's text piece by piece; after each
 * piece it says in which context the next character would be read.
 */
class Lexer {
  private stack: Frame[] = [];
  private single = false;
  private comment = false;
  private pending: PendingHeredoc[] = [];
  private heredoc: (PendingHeredoc & { line: string }) | undefined;
  /** The previous character, for `#` (starts a comment only at a word's start) and `\`. */
  private prev = '\n';
  private escaped = false;

  private inDouble(): boolean {
    return this.stack.at(-1)?.until === '"';
  }

  context(): Context {
    if (this.heredoc !== undefined)
      return { kind: 'heredoc', delimiter: this.heredoc.delimiter, quoted: this.heredoc.quoted };
    if (this.single) return { kind: 'single' };
    if (this.comment) return { kind: 'comment' };
    if (this.inDouble()) return { kind: 'double' };
    if (this.stack.at(-1)?.until === '}') throw new ShellTemplateError('a value inside ${…} is not supported');
    return { kind: 'unquoted' };
  }

  closed(): boolean {
    // A here-document's delimiter on the text's last line ends it, as the newline after it would.
    const h = this.heredoc;
    const ended = h !== undefined && (h.stripTabs ? h.line.replace(/^\t+/, '') : h.line) === h.delimiter;
    return (
      this.stack.length === 0 &&
      !this.single &&
      (h === undefined || (ended && this.pending.length === 0)) &&
      this.pending.length === 0 &&
      !this.escaped
    );
  }

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) i = this.step(text, i);
  }

  /** Reads the character at `i`; returns the index of the last character consumed. */
  private step(text: string, i: number): number {
    const c = text[i] ?? '';
    if (this.heredoc !== undefined) return this.heredocStep(c, i);
    if (this.escaped) {
      this.escaped = false;
      this.prev = 'x';
      return i;
    }
    if (this.single) {
      if (c === "'") this.single = false;
      this.prev = c;
      return i;
    }
    if (this.comment) {
      if (c === '\n') {
        this.comment = false;
        this.newline();
      }
      this.prev = c;
      return i;
    }
    const top = this.stack.at(-1);
    if (c === '\\') {
      this.escaped = true;
      return i;
    }
    if (top?.until === '"') {
      if (c === '"') this.stack.pop();
      else if (c === '$' && text[i + 1] === '(') return this.open(')', i + 1);
      else if (c === '$' && text[i + 1] === '{') return this.open('}', i + 1);
      else if (c === '`') return this.open('`', i);
      this.prev = c;
      return i;
    }
    if (c === "'") this.single = true;
    else if (c === '"') this.stack.push({ until: '"', depth: 0 });
    else if (c === '#' && /[\s;&|()]/.test(this.prev) && top?.until !== '}') this.comment = true;
    else if (c === '$' && text[i + 1] === '(') return this.open(')', i + 1);
    else if (c === '$' && text[i + 1] === '{') return this.open('}', i + 1);
    else if (c === '`') {
      if (top?.until === '`') this.stack.pop();
      else return this.open('`', i);
    } else if (c === '(' && top?.until === ')') top.depth++;
    else if (c === ')' && top?.until === ')') {
      if (top.depth === 0) this.stack.pop();
      else top.depth--;
    } else if (c === '}' && top?.until === '}') this.stack.pop();
    else if (c === '<' && text[i + 1] === '<' && text[i + 2] !== '<') return this.heredocOperator(text, i);
    else if (c === '\n') this.newline();
    this.prev = c;
    return i;
  }

  private open(until: Frame['until'], last: number): number {
    this.stack.push({ until, depth: 0 });
    this.prev = '(';
    return last;
  }

  /** `<<WORD` / `<<-WORD`: the here-document's body starts after this line. */
  private heredocOperator(text: string, i: number): number {
    let j = i + 2;
    const stripTabs = text[j] === '-';
    if (stripTabs) j++;
    while (text[j] === ' ' || text[j] === '\t') j++;
    const m = /^(?:'([^']*)'|"([^"]*)"|\\?([A-Za-z0-9_-]+))/.exec(text.slice(j));
    if (m === null) throw new ShellTemplateError('a here-document needs a literal delimiter word');
    const delimiter = m[1] ?? m[2] ?? m[3] ?? '';
    this.pending.push({ delimiter, quoted: m[3] === undefined || m[0].startsWith('\\'), stripTabs });
    this.prev = 'x';
    return j + m[0].length - 1;
  }

  private newline(): void {
    const next = this.pending.shift();
    if (next !== undefined) this.heredoc = { ...next, line: '' };
  }

  private heredocStep(c: string, i: number): number {
    const h = this.heredoc;
    if (h === undefined) return i;
    if (c !== '\n') {
      h.line += c;
      return i;
    }
    const line = h.stripTabs ? h.line.replace(/^\t+/, '') : h.line;
    if (line === h.delimiter) {
      this.heredoc = undefined;
      this.newline();
    } else h.line = '';
    this.prev = '\n';
    return i;
  }

  /** An interpolated value ends the current here-document line's chance of being the delimiter. */
  valueInserted(value: string): void {
    if (this.heredoc !== undefined) {
      const lines = value.split('\n');
      this.heredoc.line = lines.length === 1 ? this.heredoc.line + value : (lines.at(-1) ?? '');
    } else this.prev = 'x';
  }
}

/** The context of each interpolation of a template, read once per call site (the strings array is the same object every time). */
const CONTEXTS = new WeakMap<TemplateStringsArray, { contexts: Context[]; closed: boolean }>();

function contextsOf(strings: TemplateStringsArray): { contexts: Context[]; closed: boolean } {
  const known = CONTEXTS.get(strings);
  if (known !== undefined) return known;
  const lexer = new Lexer();
  const contexts: Context[] = [];
  strings.forEach((s, i) => {
    lexer.feed(s);
    if (i < strings.length - 1) {
      const context = lexer.context();
      contexts.push(context);
      // A value is one inert unit: it never changes the quoting around it.
      lexer.valueInserted(context.kind === 'heredoc' ? 'x\nx' : 'x');
    }
  });
  const result = { contexts, closed: lexer.closed() };
  CONTEXTS.set(strings, result);
  return result;
}

function word(value: string): string {
  return value !== '' && SAFE_WORD.test(value) ? value : shellQuote(value);
}

function escapeIn(context: Context, value: string): string {
  assertEncodable('sh', value);
  switch (context.kind) {
    case 'unquoted':
      return word(value);
    case 'double':
      return value.replace(/[$`"\\]/g, (c) => `\\${c}`);
    case 'single':
      if (value === '' || SAFE_WORD.test(value)) return value;
      throw new UnrepresentableError(
        'sh',
        value,
        'a value inside a single-quoted program (awk, sed, a pattern) must be a plain word: pass it as an argument or variable',
      );
    case 'comment':
      if (/[\r\n]/.test(value)) throw new UnrepresentableError('sh', value, 'a comment is one line');
      return value;
    case 'heredoc':
      if (!context.quoted) return value.replace(/[$`\\]/g, (c) => `\\${c}`);
      if (value.split('\n').some((l) => l === context.delimiter))
        throw new UnrepresentableError(
          'sh',
          value,
          `a line of it is the here-document's delimiter ${context.delimiter}`,
        );
      return value;
  }
}

function insert(context: Context, value: ShellValue, at: number): string {
  if (value instanceof ShellText) {
    if (context.kind !== 'unquoted' && context.kind !== 'heredoc')
      throw new ShellTemplateError(`script text at value ${at} lands inside ${context.kind} quotes`);
    if (!value.closed) throw new ShellTemplateError(`script text at value ${at} leaves a quote or here-document open`);
    return value.text;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ShellTemplateError(`value ${at} is the number ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return escapeIn(context, value);
  if (Array.isArray(value)) {
    if (context.kind !== 'unquoted') throw new ShellTemplateError(`a list at value ${at} lands inside ${context.kind}`);
    return value.map((v) => insert(context, v, at)).join(' ');
  }
  throw new ShellTemplateError(`value ${at} is ${value === null ? 'null' : typeof value}, not text`);
}

/** A shell script whose every interpolation is escaped for where it lands (see the file's comment). */
export function shell(strings: TemplateStringsArray, ...values: readonly ShellValue[]): ShellText {
  const { contexts, closed } = contextsOf(strings);
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    out += insert(contexts[i] ?? { kind: 'unquoted' }, values[i] as ShellValue, i);
    out += strings[i + 1] ?? '';
  }
  return new ShellText(out, closed);
}

/** A constant piece of script, as code (kubemix/shell-code allows a literal only: never a value). */
export function shellCode(text: string): ShellText {
  const lexer = new Lexer();
  lexer.feed(text);
  return new ShellText(text, lexer.closed());
}

/** Script pieces one after the other, each on its own line(s). */
export function shellLines(
  parts: readonly ShellText[],
  separator: '\n' | ' && ' | ' || ' | '; ' | ' ' = '\n',
): ShellText {
  for (const [i, p] of parts.entries())
    if (!p.closed) throw new ShellTemplateError(`script piece ${i} leaves a quote or here-document open`);
  return new ShellText(parts.map((p) => p.text).join(separator), true);
}
