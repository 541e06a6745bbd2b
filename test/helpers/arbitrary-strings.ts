// Seeded arbitrary strings for the escaper property tests: every C0 and C1
// control, NUL, quotes of every kind (ASCII, typographic, the PowerShell
// U+2018–U+201B set), shell/TOML/INI/XML/YAML/Jinja metacharacters, line
// separators, BOM, non-characters, astral characters and lone surrogates.
// Deterministic: the same seed gives the same strings on every run.

const PIECES: readonly string[] = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  '\u007f',
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)),
  "'",
  '"',
  '`',
  '\u2018',
  '\u2019',
  '\u201a',
  '\u201b',
  '\u201c',
  '\u201d',
  '\u201e',
  '\u00b4',
  '\u2032',
  '\\',
  '$',
  '$(',
  '${IFS}',
  '%',
  '%%',
  '%n',
  '&',
  ';',
  '|',
  '<',
  '>',
  '#',
  '=',
  '[',
  ']',
  '{',
  '}',
  '{{',
  '{%',
  '{#',
  ' ',
  '  ',
  '\r\n',
  '\u2028',
  '\u2029',
  '\u0085',
  '\ufeff',
  '\ufffe',
  '\uffff',
  '\ufdd0',
  '\u{1fffe}',
  '\u{10ffff}',
  '\ud83d\ude00',
  '\ud800',
  '\udfff',
  '\udc00x',
  'a',
  'Z',
  '0',
  '9',
  '.',
  ',',
  ':',
  '-',
  '_',
  '/',
  '~',
  '@',
  '+',
  'True',
  'None',
  '1,2',
  '1.5',
  '-1',
  '0x10',
  '1e5',
  'é',
  '\u4e2d',
  'null',
  'yes',
  '*',
  '&a',
  '!tag',
  '? ',
  '- ',
];

/** Fixed cases every property test starts with. */
export const EDGE_CASES: readonly string[] = [
  '',
  ' ',
  "'",
  "''",
  '"',
  '\\',
  '\\\\',
  '\n',
  '\r',
  '\0',
  'a\0b',
  '\ud800',
  '\udc00',
  '%',
  '%%',
  "https://mirror.example.com/files';touch${IFS}/tmp/x;'",
  'a.example\nExecStartPre=/bin/touch /tmp/PWN',
  "mirror.example.com']\n  skip_verify = true\n[x.'",
  'b\u2019; calc; \u2019',
  '1,2',
  'True',
  '1.5',
  '192.0.2.1',
  '{{ lookup("pipe", "id") }}',
  '\u2018\u2019\u201a\u201b',
  "'\u2019",
  '\u2019\u2019\u2019',
];

/** mulberry32: a small, well-mixed 32-bit PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` strings after the edge cases, each of 0–24 random pieces. */
export function arbitraryStrings(seed: number, count: number): string[] {
  const next = rng(seed);
  const out = [...EDGE_CASES];
  for (let i = 0; i < count; i++) {
    const length = Math.floor(next() * 25);
    out.push(Array.from({ length }, () => PIECES[Math.floor(next() * PIECES.length)] ?? '').join(''));
  }
  return out;
}

/** True when the string holds a NUL or a lone surrogate: no UTF-8 file can carry it. */
export function unencodable(value: string): boolean {
  return value.includes('\0') || /\p{Cs}/u.test(value);
}
