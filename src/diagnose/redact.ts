// Redaction of what `diagnose` collects, before anything is written: the
// values the state directory's secret store holds (the executor's own
// redaction), then the shapes secrets take in logs and configs — PEM private
// keys, bearer tokens and JWTs (ServiceAccount tokens), kubeadm bootstrap
// tokens, and the values of `token`, `password`, `*-key-data` and `secret`
// fields. Pure.

const RULES: readonly [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, '<redacted:private-key>'],
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 <redacted:token>'],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, '<redacted:jwt>'],
  [/\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g, '<redacted:bootstrap-token>'],
  [
    /(["']?(?:token|password|passwd|secret|client-key-data|[a-z-]*-key-data)["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,}]+)/gi,
    '$1<redacted>',
  ],
];

export function redactText(text: string, secretValues: Iterable<[string, string]> = []): string {
  let out = text;
  for (const [name, value] of secretValues) {
    if (value.length < 4) continue;
    out = out.split(value).join(`<redacted:${name}>`);
  }
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
