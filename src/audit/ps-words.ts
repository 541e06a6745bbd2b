// The parameters of named commands in PowerShell that kubemix rendered, for
// the audits that read a plan back (the firewall rules a node gets). Not a
// PowerShell parser: it finds a command name at the start of a statement and
// splits the rest of that statement into words the way PowerShell's
// argument mode does for the forms kubemix emits — bare words, single-quoted
// strings (a doubled quote is one quote), comma lists — up to an unquoted
// `|`, `;` or end of line. The tests hold it to tree-sitter-powershell: every
// such command the grammar finds in a rendered script is read here with the
// same parameters (test/audit-traffic.test.ts).

export interface PsStatement {
  /** The command name, lower case. */
  readonly command: string;
  /** Parameter name (lower case, no dash) → its values; a switch has none. */
  readonly params: ReadonlyMap<string, readonly string[]>;
  /** The statement's text, for messages. */
  readonly text: string;
}

const QUOTES = /['\u2018\u2019\u201a\u201b]/;

/** Words of one statement from `start`; stops at an unquoted `|`, `;`, `}` or the end of the line. */
function words(line: string, start: number): { words: string[]; end: number } {
  const out: string[] = [];
  let i = start;
  let word = '';
  let quoted = false;
  let inWord = false;
  const flush = (): void => {
    if (inWord) out.push(quoted ? `'${word}` : word);
    word = '';
    quoted = false;
    inWord = false;
  };
  while (i < line.length) {
    const c = line[i] ?? '';
    if (QUOTES.test(c)) {
      // A quoted run: doubled quotes are one literal quote.
      inWord = true;
      quoted = true;
      i += 1;
      while (i < line.length) {
        const d = line[i] ?? '';
        if (QUOTES.test(d)) {
          if (QUOTES.test(line[i + 1] ?? '')) {
            word += d;
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        word += d;
        i += 1;
      }
      continue;
    }
    if (c === '|' || c === ';' || c === '}') break;
    if (/\s/.test(c)) {
      flush();
      i += 1;
      continue;
    }
    inWord = true;
    word += c;
    i += 1;
  }
  flush();
  return { words: out, end: i };
}

/** A word's values: a comma list of quoted or bare items (quoted words carry a leading `'` marker). */
function values(word: string): string[] {
  const text = word.startsWith("'") ? word.slice(1) : word;
  return word.startsWith("'") ? [text] : text.split(',').filter((v) => v !== '');
}

/** For each character of a line, whether it lies inside a quoted string (single or double quotes). */
function quotedMask(line: string): boolean[] {
  const mask: boolean[] = [];
  let quote: 'single' | 'double' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quote === undefined) {
      if (QUOTES.test(c)) quote = 'single';
      else if (c === '"') quote = 'double';
      mask.push(quote !== undefined);
      continue;
    }
    mask.push(true);
    if (quote === 'single' && QUOTES.test(c)) {
      if (QUOTES.test(line[i + 1] ?? '')) {
        mask.push(true);
        i += 1;
      } else quote = undefined;
    } else if (quote === 'double' && c === '"') quote = undefined;
  }
  return mask;
}

/** Every statement in `script` that calls one of `commands` (case-insensitive), in order; names inside strings are not calls. */
export function powershellStatements(script: string, commands: readonly string[]): PsStatement[] {
  const wanted = new Set(commands.map((c) => c.toLowerCase()));
  const out: PsStatement[] = [];
  for (const line of script.split('\n')) {
    const quoted = quotedMask(line);
    for (const m of line.matchAll(/(^|[\s{;(])([A-Za-z]+-[A-Za-z]+)(?=\s)/g)) {
      const name = (m[2] ?? '').toLowerCase();
      if (!wanted.has(name) || quoted[(m.index ?? 0) + (m[1] ?? '').length] === true) continue;
      const start = (m.index ?? 0) + (m[1] ?? '').length + (m[2] ?? '').length;
      const { words: ws, end } = words(line, start);
      const params = new Map<string, string[]>();
      let current: string | undefined;
      for (const w of ws) {
        if (!w.startsWith("'") && /^-[A-Za-z]+$/.test(w)) {
          current = w.slice(1).toLowerCase();
          params.set(current, []);
          continue;
        }
        if (current === undefined) continue;
        params.get(current)?.push(...values(w));
      }
      out.push({ command: name, params, text: line.slice((m.index ?? 0) + (m[1] ?? '').length, end).trim() });
    }
  }
  return out;
}
