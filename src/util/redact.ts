// Redaction of text bound for logs, journals, events and diagnose bundles:
// every form a known secret value takes (as it is, base64 at each of the
// three alignments inside a longer base64 text, URL-encoded), then the shapes
// secrets take whatever their value: PEM private keys (whole, or cut at
// either end), credentials in URLs, HTTP Basic and Bearer authorization,
// docker config `auth`, JWTs, kubeadm bootstrap tokens (any case), and the
// values of token/password/secret/key-data fields. Pure.

/** A value shorter than this is not looked for: it would match ordinary text. */
const MIN_SECRET_LENGTH = 4;

const RULES: readonly [RegExp, string][] = [
  // A whole PEM private key; then one cut at its start (END with no BEGIN) or at its end (BEGIN with no END).
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, '<redacted:private-key>'],
  // Lines of base64 end in a newline, or in `\n` inside JSON: one way to split them, so no backtracking blow-up.
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{1,80})*/g, '<redacted:private-key>'],
  [/(?:[A-Za-z0-9+/=]{1,80}(?:\r?\n|\\n))*-----END [A-Z ]*PRIVATE KEY-----/g, '<redacted:private-key>'],
  // scheme://user:password@host (and scheme://token@host): the userinfo.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"<>]+@/gi, '$1<redacted:credentials>@'],
  [/\b(Authorization\s*[:=]\s*["']?\s*(?:Basic|Bearer|Token|Digest)\s+)[^\s"',;]+/gi, '$1<redacted:authorization>'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/g, '$1 <redacted:token>'],
  [/(["']?(?:auth|identitytoken|registrytoken)["']?\s*:\s*)("[^"\n]*"|'[^'\n]*')/gi, '$1"<redacted>"'],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, '<redacted:jwt>'],
  [/\b[A-Za-z0-9]{6}\.[A-Za-z0-9]{16}\b/g, '<redacted:bootstrap-token>'],
  [
    /(["']?(?:token|password|passwd|secret|client-key-data|[a-z-]*-key-data)["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,}]+)/gi,
    '$1<redacted>',
  ],
];

/**
 * The texts a value shows up as: itself, URL-encoded, and base64 — whole,
 * and as the run of characters it gives at offset 1 or 2 of a longer
 * base64 text (each 3 bytes become 4 characters, so a value inside a base64
 * blob is found by dropping the characters its neighbours share).
 */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const encoded = encodeURIComponent(value);
  forms.add(encoded);
  forms.add(encoded.replace(/%20/g, '+'));
  for (let pad = 0; pad < 3; pad++) {
    const b64 = Buffer.from(`${'\0'.repeat(pad)}${value}`).toString('base64');
    // Drop the characters that also depend on the padding bytes before and the unknown bytes after.
    const start = pad === 0 ? 0 : pad === 1 ? 2 : 3;
    const whole = Buffer.byteLength(value) + pad;
    const end = Math.floor(whole / 3) * 4;
    const core = b64.slice(start, end);
    if (core.length >= 8) {
      forms.add(core);
      forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  forms.add(Buffer.from(value).toString('base64'));
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

export interface KnownSecrets {
  /** [name, form] pairs, longest form first, so overlapping values are replaced whole. */
  readonly forms: readonly (readonly [string, string])[];
}

/** Every form of every known value, precomputed once for a run. */
export function knownSecrets(values: Iterable<readonly [string, string]>): KnownSecrets {
  const forms: [string, string][] = [];
  for (const [name, value] of values) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    for (const f of secretForms(value)) forms.push([name, f]);
  }
  forms.sort((a, b) => b[1].length - a[1].length);
  return { forms };
}

/** Text with every known secret (in any of its forms) and every secret shape replaced by `<redacted…>`. */
export function redactSecrets(text: string, known: KnownSecrets = { forms: [] }): string {
  let out = text;
  for (const [name, form] of known.forms) if (out.includes(form)) out = out.split(form).join(`<redacted:${name}>`);
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
