// Tabs that start the continuation lines of a multi-line quoted scalar.
// Line folding drops a continuation line's leading white space, tabs
// included (YAML 1.2 §7.3, "s-flow-line-prefix"), and libyaml-based readers
// (PyYAML, and go-yaml behind kubectl) accept such files. The yaml library
// counts those tabs as indentation, cuts the scalar short and reports a
// cascade of errors after it. Replacing that leading white space by spaces
// indented past the scalar's key keeps the scalar's value (the white space is
// folded away either way) and every line number. Tabs anywhere else are left
// alone.

type Quote = '"' | "'";

/**
 * Whether a quote opens a scalar: first on its line, after a flow indicator,
 * or after `:`, `-` or `?` and a space. Otherwise it is part of a plain
 * scalar (`it's`, `a="b"`).
 */
function opensScalar(lastNonSpace: string, previous: string | undefined): boolean {
  if (lastNonSpace === '' || lastNonSpace === '[' || lastNonSpace === '{' || lastNonSpace === ',') return true;
  return (
    (lastNonSpace === ':' || lastNonSpace === '-' || lastNonSpace === '?') &&
    previous !== undefined &&
    /\s/.test(previous)
  );
}

/** The text with the leading white space of quoted-scalar continuation lines that hold a tab made spaces; the same text when there are none. */
export function untabQuotedContinuations(text: string): string {
  if (!/^[ \t]*\t/m.test(text)) return text;
  const lines = text.split('\n');
  let quote: Quote | undefined;
  /** Spaces a continuation line needs: one more than the content of the line the quote opened on. */
  let needed = 0;
  let blockIndent: number | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    let line = lines[i] ?? '';
    if (quote !== undefined) {
      const lead = /^[ \t]*/.exec(line)?.[0] ?? '';
      if (lead.includes('\t')) line = ' '.repeat(Math.max(needed, lead.length)) + line.slice(lead.length);
      lines[i] = line;
    } else if (blockIndent !== undefined) {
      const indent = /^ */.exec(line)?.[0].length ?? 0;
      if (line.trim() === '' || indent > blockIndent) continue;
      blockIndent = undefined;
    }
    const opened = quote === undefined;
    const scan = scanLine(line, quote);
    quote = scan.quote;
    if (quote !== undefined && opened) needed = (/^(?: *- +)* */.exec(line)?.[0].length ?? 0) + 1;
    if (quote === undefined && scan.blockScalar) blockIndent = /^ */.exec(line)?.[0].length ?? 0;
  }
  return lines.join('\n');
}

/** The quote still open at the end of a line, and whether the line starts a block scalar (`key: |`). */
function scanLine(line: string, open: Quote | undefined): { quote: Quote | undefined; blockScalar: boolean } {
  let quote = open;
  let last = '';
  let end = line.length;
  for (let j = 0; j < line.length; j += 1) {
    const c = line[j] ?? '';
    if (quote === '"') {
      if (c === '\\') j += 1;
      else if (c === '"') quote = undefined;
    } else if (quote === "'") {
      if (c === "'" && line[j + 1] === "'") j += 1;
      else if (c === "'") quote = undefined;
    } else if (c === '#' && (j === 0 || /\s/.test(line[j - 1] ?? ''))) {
      end = j;
      break;
    } else if ((c === '"' || c === "'") && opensScalar(last, line[j - 1])) {
      quote = c;
    }
    if (!/\s/.test(c)) last = quote === undefined ? c : last;
  }
  const blockScalar = quote === undefined && /(^|\s)[|>][+-]?\d?[+-]?\s*$/.test(line.slice(0, end));
  return { quote, blockScalar };
}
