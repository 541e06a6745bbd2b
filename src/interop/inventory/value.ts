// Ansible's INI plugin splits a host line with Python's shlex (POSIX mode,
// comments on) and then runs every value through ast.literal_eval, keeping
// the text when that fails. Both are reproduced here, as far as inventories
// use them, so `ansible_port=22` is the number 22 and `x="a b"` is `a b`.

/** Python `shlex.split(line, comments=True)` (POSIX). Throws on an unclosed quote. */
export function shlexSplit(line: string): string[] {
  const tokens: string[] = [];
  let token = '';
  let inToken = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (quote === '"' && c === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) token += line[++i];
      else token += c;
      continue;
    }
    if (/\s/.test(c)) {
      if (inToken) tokens.push(token);
      token = '';
      inToken = false;
    } else if (c === '#') {
      break;
    } else if (c === '"' || c === "'") {
      quote = c;
      inToken = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('No escaped character');
      token += line[++i];
      inToken = true;
    } else {
      token += c;
      inToken = true;
    }
  }
  if (quote !== undefined) throw new Error('No closing quotation');
  if (inToken) tokens.push(token);
  return tokens;
}

/** Python `ast.literal_eval(text)`, or the text itself when it is not a literal. */
export function parseValue(text: string): unknown {
  const parser = new LiteralParser(text);
  try {
    const value = parser.value();
    parser.skipSpace();
    return parser.atEnd() ? value : text;
  } catch {
    return text;
  }
}

class LiteralParser {
  private i = 0;
  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.i >= this.s.length;
  }

  skipSpace(): void {
    while (this.i < this.s.length && /[ \t]/.test(this.s[this.i] as string)) this.i++;
  }

  value(): unknown {
    this.skipSpace();
    const c = this.s[this.i];
    if (c === '[' || c === '(') return this.sequence(c === '[' ? ']' : ')');
    if (c === '{') return this.mapping();
    if (c === '"' || c === "'") return this.string(c);
    const word = /^[-+]?[A-Za-z0-9_.]+/.exec(this.s.slice(this.i))?.[0];
    if (word === undefined) throw new Error('not a literal');
    this.i += word.length;
    return wordValue(word);
  }

  private sequence(close: string): unknown[] {
    this.i++;
    const out: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.s[this.i] === close) break;
      out.push(this.value());
      this.skipSpace();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) throw new Error('expected ,');
    }
    this.i++;
    return out;
  }

  private mapping(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.s[this.i] === '}') break;
      const key = this.value();
      this.skipSpace();
      if (this.s[this.i++] !== ':') throw new Error('expected :');
      out[String(key)] = this.value();
      this.skipSpace();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== '}') throw new Error('expected ,');
    }
    this.i++;
    return out;
  }

  private string(q: string): string {
    let out = '';
    for (this.i++; this.i < this.s.length; this.i++) {
      const c = this.s[this.i] as string;
      if (c === q) {
        this.i++;
        return out;
      }
      if (c === '\\') {
        const n = this.s[++this.i] ?? '';
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      } else out += c;
    }
    throw new Error('unterminated string');
  }
}

function wordValue(word: string): unknown {
  if (word === 'True') return true;
  if (word === 'False') return false;
  if (word === 'None') return null;
  const digits = word.replace(/_/g, '');
  if (/^[-+]?0[xX][0-9a-fA-F]+$/.test(digits)) return signed(digits, 16);
  if (/^[-+]?0[oO][0-7]+$/.test(digits)) return signed(digits, 8);
  if (/^[-+]?0[bB][01]+$/.test(digits)) return signed(digits, 2);
  // Python 3 rejects leading zeros (`007`), so such text stays a string.
  if (/^[-+]?(0|[1-9][0-9]*)$/.test(digits)) return Number(digits);
  if (/^[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/.test(digits) || /^[-+]?[0-9]+[eE][-+]?[0-9]+$/.test(digits))
    return Number(digits);
  throw new Error('not a literal');
}

function signed(text: string, radix: number): number {
  const negative = text.startsWith('-');
  const body = text.replace(/^[-+]/, '').slice(2);
  const n = parseInt(body, radix);
  return negative ? -n : n;
}
