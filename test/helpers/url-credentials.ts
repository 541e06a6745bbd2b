// Shared by the URL-credential tests: how a careful user writes a password
// into a URL, every form it could leak in, and a scan of the files a
// command left behind for any of them.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** RFC 3986 userinfo encoding, as a careful user writes it (only unreserved characters bare). */
export const strict = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** A password as it is, strictly and loosely URL-encoded, and base64. */
export function leakForms(password: string): string[] {
  return [password, strict(password), encodeURIComponent(password), Buffer.from(password).toString('base64')];
}

export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Fails naming the file and the form when a file holds any of `leaks` (read as UTF-8 and as bytes). */
export function assertNoLeak(files: readonly string[], leaks: readonly string[]): void {
  for (const f of files) {
    const text = readFileSync(f, 'latin1') + readFileSync(f, 'utf8');
    for (const leak of leaks) assert.ok(!text.includes(leak), `${f} holds ${JSON.stringify(leak)}`);
  }
}
