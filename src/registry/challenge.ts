// The WWW-Authenticate challenge a registry answers 401 with (RFC 7235):
// `Basic realm="…"` or `Bearer realm="…",service="…",scope="…"`.

export interface Challenge {
  readonly scheme: 'basic' | 'bearer';
  readonly params: Readonly<Record<string, string>>;
}

export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*(\w+)\s*(.*)$/s.exec(header);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') return undefined;
  const params: Record<string, string> = {};
  // Quoted values may hold commas (`scope="repository:a:pull,push"`).
  for (const m of (match?.[2] ?? '').matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    const key = m[1]?.toLowerCase();
    if (key !== undefined) params[key] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return { scheme, params };
}
