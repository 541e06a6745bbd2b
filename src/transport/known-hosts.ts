// OpenSSH known_hosts: plain and hashed (`|1|salt|hash`) host patterns,
// `[host]:port`, wildcards and negation, `@cert-authority` and `@revoked`.
// Host certificates: ssh2 does not negotiate `*-cert-v01@openssh.com` host
// key algorithms, so a host is only ever accepted by a plain key line;
// `@cert-authority` lines are parsed, kept and reported, never trusted blindly.
import { createHash, createHmac } from 'node:crypto';
import { appendFile, lstat, mkdir, open } from 'node:fs/promises';
import { constants } from 'node:fs';
import { InputError } from '../errors.js';
import { dirname } from 'node:path';

export interface KnownHostLine {
  readonly marker: 'cert-authority' | 'revoked' | undefined;
  readonly patterns: readonly string[];
  readonly keyType: string;
  readonly key: Buffer;
  readonly line: number;
}

export type Verdict =
  | { readonly status: 'ok'; readonly fingerprint: string }
  | { readonly status: 'unknown'; readonly fingerprint: string; readonly caOnly: boolean }
  | { readonly status: 'changed'; readonly fingerprint: string; readonly known: readonly string[] }
  | { readonly status: 'revoked'; readonly fingerprint: string };

export function parseKnownHosts(text: string): KnownHostLine[] {
  const lines: KnownHostLine[] = [];
  text.split('\n').forEach((raw, index) => {
    const fields = raw.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return;
    let marker: KnownHostLine['marker'];
    if (fields[0] === '@cert-authority' || fields[0] === '@revoked')
      marker = fields.shift()?.slice(1) as KnownHostLine['marker'];
    const [hosts, keyType, key] = fields;
    if (hosts === undefined || keyType === undefined || key === undefined) return;
    lines.push({ marker, patterns: hosts.split(','), keyType, key: Buffer.from(key, 'base64'), line: index + 1 });
  });
  return lines;
}

/** How OpenSSH names a host in known_hosts: `addr`, or `[addr]:port` off port 22. */
export function hostKeyName(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}

export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The algorithm name at the start of an SSH public key blob. */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return '';
  const length = key.readUInt32BE(0);
  return key.subarray(4, 4 + length).toString('latin1');
}

function globMatch(pattern: string, text: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i').test(text);
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (salt === undefined || hash === undefined) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  return globMatch(pattern, name);
}

/** OpenSSH semantics: any negated match rejects the line, else any positive match accepts. */
export function lineMatches(patterns: readonly string[], name: string): boolean {
  let positive = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (patternMatches(p.slice(1), name)) return false;
    } else if (patternMatches(p, name)) positive = true;
  }
  return positive;
}

export function verifyKey(lines: readonly KnownHostLine[], name: string, key: Buffer): Verdict {
  const fp = fingerprint(key);
  const mine = lines.filter((l) => lineMatches(l.patterns, name));
  if (lines.some((l) => l.marker === 'revoked' && l.key.equals(key))) return { status: 'revoked', fingerprint: fp };
  const plain = mine.filter((l) => l.marker === undefined);
  if (plain.some((l) => l.key.equals(key))) return { status: 'ok', fingerprint: fp };
  if (plain.length > 0) return { status: 'changed', fingerprint: fp, known: plain.map((l) => fingerprint(l.key)) };
  return { status: 'unknown', fingerprint: fp, caOnly: mine.some((l) => l.marker === 'cert-authority') };
}

/** Host key algorithms to offer for a host so negotiation picks a type we know. */
export function hostKeyAlgorithms(lines: readonly KnownHostLine[], name: string): string[] {
  const types = new Set(
    lines.filter((l) => l.marker === undefined && lineMatches(l.patterns, name)).map((l) => l.keyType),
  );
  const out: string[] = [];
  for (const t of types) out.push(...(t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]));
  return out;
}

/** 64 MiB: some 100 000 hosts' keys. */
const MAX_KNOWN_HOSTS_BYTES = 64 * 1024 * 1024;

/**
 * The file's text; a directory, FIFO, device, dangling link or a file over
 * the limit is exit 2 naming it (opened without blocking: a FIFO is seen, not waited on).
 */
async function readRegularFile(path: string): Promise<string> {
  const refuse = (why: string): InputError =>
    new InputError('state.known-hosts', `cannot read ${path}: ${why}`, {
      path,
      hint: 'name an OpenSSH known_hosts file (or none: it is made when a host is first trusted)',
    });
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    throw refuse(error.code === 'ENOENT' ? 'it is a symbolic link to nothing' : (error.code ?? 'EIO'));
  });
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refuse(stat.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (stat.size > MAX_KNOWN_HOSTS_BYTES) throw refuse(`it is larger than ${MAX_KNOWN_HOSTS_BYTES} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** A known_hosts file; appends (TOFU records) are fsynced. */
export class KnownHostsFile {
  private lines: KnownHostLine[] = [];
  constructor(readonly path: string) {}

  async load(): Promise<this> {
    const present = await lstat(this.path).then(
      () => true,
      (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
    );
    this.lines = present ? parseKnownHosts(await readRegularFile(this.path)) : [];
    return this;
  }

  get entries(): readonly KnownHostLine[] {
    return this.lines;
  }

  verify(name: string, key: Buffer): Verdict {
    return verifyKey(this.lines, name, key);
  }

  algorithmsFor(name: string): string[] {
    return hostKeyAlgorithms(this.lines, name);
  }

  async add(name: string, key: Buffer): Promise<void> {
    const text = `${name} ${keyTypeOf(key)} ${key.toString('base64')}\n`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await appendFile(this.path, text, { mode: 0o600 });
    const handle = await open(this.path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    this.lines.push(...parseKnownHosts(text));
  }
}
