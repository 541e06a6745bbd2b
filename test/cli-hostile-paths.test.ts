// Every flag that takes a path, against a table of hostile paths: a
// directory, a missing folder, a dangling link, a link loop, a FIFO, a
// device, /proc/self/mem, a read-only file, a file where a folder belongs.
// Each is exit 2 naming the flag and what is wrong, with no stack trace and
// nothing under the scratch folder changed (the dangling link's target is
// not created, the FIFO is never opened for a wait, a device never read or
// replaced).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hasStackTrace, runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('hostile-paths');
after(() => tmp.remove());
const at = (...p: string[]): string => join(tmp.dir, ...p);

type Hostile =
  | 'directory'
  | 'missing folder'
  | 'dangling link'
  | 'link loop'
  | 'fifo'
  | 'device'
  | '/proc/self/mem'
  | 'read-only'
  | 'file for a folder';

/** The path of each hostile kind, and what the message must say about it. */
const HOSTILE: Record<Hostile, { path: string; says: RegExp }> = {
  directory: { path: at('a-dir'), says: /is a directory/ },
  'missing folder': { path: at('no-such-folder', 'x'), says: /no-such-folder does not exist/ },
  'dangling link': { path: at('dangling'), says: /symbolic link( to \S+, which does not exist)?/ },
  'link loop': { path: at('loop-a'), says: /symbolic link( loop)?/ },
  fifo: { path: at('fifo'), says: /is a FIFO \(named pipe\)/ },
  // A character device of its own (/dev/zero's numbers), never /dev/zero itself: a check that let a
  // device through would rename a file over it, and as root that replaces the machine's /dev/zero.
  device: { path: at('zero-device'), says: /is a character device/ },
  '/proc/self/mem': {
    path: '/proc/self/mem',
    says: /kernel \(\/proc\)|symbolic link|is a file, not a (plan )?directory/,
  },
  'read-only': { path: at('read-only'), says: /read-only/ },
  'file for a folder': { path: at('a-file', 'x'), says: /a-file is a file, not a folder/ },
};

// The existing-driver spec: its hosts are on loopback, port 9 (discard: refused at once), so a check
// that lets a hostile path through ends in a failed connection, never in traffic elsewhere.
const SPEC = `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata:
  name: hostile
spec:
  network:
    nodeCidr: 192.0.2.0/24
    gateway: 192.0.2.1
  infrastructure:
    driver: existing
    hosts:
      - {name: cp1, address: 127.0.0.1, port: 9, ip: 192.0.2.10, roles: [control-plane], os: debian-12}
  services:
    enabled: false
`;

const ADMIN = `apiVersion: v1
kind: Config
clusters:
- {name: kubernetes, cluster: {server: 'https://192.0.2.10:6443'}}
users:
- {name: kubernetes-admin, user: {token: x}}
contexts:
- {name: kubernetes-admin@kubernetes, context: {cluster: kubernetes, user: kubernetes-admin}}
current-context: kubernetes-admin@kubernetes
`;

interface PathFlag {
  readonly flag: string;
  /** The command line with the path put in. */
  readonly argv: (path: string) => string[];
  /** Kinds that are no problem for this flag (reading a read-only file is fine). */
  readonly harmless?: readonly Hostile[];
  readonly code: RegExp;
}

const state = at('state');
const FLAGS: readonly PathFlag[] = [
  { flag: 'SPEC', argv: (p) => ['validate', p], harmless: ['read-only'], code: /spec\.(path|not-found)/ },
  {
    flag: '--out',
    argv: (p) => ['init', 'k8s-libvirt-1-1-1', '--force', '--out', p],
    code: /init\.out/,
  },
  { flag: '--out', argv: (p) => ['kubeconfig', 'spec.yaml', '--state-dir', state, '--out', p], code: /flags\.out/ },
  {
    flag: '--merge',
    argv: (p) => ['kubeconfig', 'spec.yaml', '--state-dir', state, '--merge', p],
    code: /flags\.merge/,
  },
  { flag: '--junit', argv: (p) => ['verify', 'spec.yaml', '--state-dir', state, '--junit', p], code: /flags\.junit/ },
  {
    flag: '--known-hosts',
    argv: (p) => ['verify', 'spec.yaml', '--state-dir', state, '--known-hosts', p],
    harmless: ['read-only'],
    code: /flags\.known-hosts/,
  },
  { flag: '--state-dir', argv: (p) => ['status', 'spec.yaml', '--state-dir', p], code: /flags\.state-dir/ },
  { flag: '--plan', argv: (p) => ['up', '--plan', p, '--state-dir', state], code: /flags\.plan/ },
  { flag: '--out', argv: (p) => ['plan', 'spec.yaml', '--out', p], code: /flags\.out/ },
];

/** Directories read-only is no hostile input for: listing and reading them is what is asked. */
const DIRECTORY_FLAGS = new Set(['--state-dir', '--plan']);

/** Every path under the scratch folder with its type and content hash (links by target), sorted. */
function snapshot(dir = tmp.dir, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const rel = `${prefix}${name}`;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out.push(`${rel} -> ${readlinkSync(path)}`);
    else if (st.isDirectory()) out.push(`${rel}/ ${(st.mode & 0o7777).toString(8)}`, ...snapshot(path, `${rel}/`));
    else if (st.isFIFO()) out.push(`${rel} fifo`);
    else if (st.isCharacterDevice()) out.push(`${rel} device ${st.rdev}`);
    else
      out.push(
        `${rel} ${(st.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`,
      );
  }
  return out;
}

before(() => {
  writeFileSync(at('spec.yaml'), SPEC);
  mkdirSync(at('a-dir'));
  writeFileSync(at('a-dir', 'keep.txt'), 'keep me\n');
  symlinkSync(at('nowhere', 'target'), at('dangling'));
  symlinkSync(at('loop-b'), at('loop-a'));
  symlinkSync(at('loop-a'), at('loop-b'));
  execFileSync('mkfifo', [at('fifo')]);
  execFileSync('mknod', ['-m', '666', at('zero-device'), 'c', '1', '5']);
  writeFileSync(at('read-only'), 'leave me\n');
  chmodSync(at('read-only'), 0o444);
  writeFileSync(at('a-file'), 'a file\n');
  mkdirSync(state, { mode: 0o700 });
  writeFileSync(
    join(state, 'secrets.json'),
    JSON.stringify({ 'admin-kubeconfig': { value: ADMIN, source: 'captured', at: '' } }),
    { mode: 0o600 },
  );
});

describe('every path-taking flag against every hostile path: exit 2 naming the flag, nothing touched', () => {
  for (const f of FLAGS) {
    for (const [kind, hostile] of Object.entries(HOSTILE) as [Hostile, (typeof HOSTILE)[Hostile]][]) {
      if (f.harmless?.includes(kind)) continue;
      // A directory is what a directory flag wants; its read-only twin is covered by the file table.
      const directoryFlag = DIRECTORY_FLAGS.has(f.flag) || f.argv('')[0] === 'plan';
      if (directoryFlag && (kind === 'directory' || kind === 'read-only')) continue;
      it(`${f.argv('PATH').slice(0, 2).join(' ')} ${f.flag} <${kind}>`, async () => {
        const before = snapshot();
        const started = Date.now();
        const r = await runCli(f.argv(hostile.path), { cwd: tmp.dir, env: { HOME: at('home') } });
        assert.equal(r.code, 2, `exit ${r.code}\n${r.stderr}`);
        assert.match(r.stderr, new RegExp(`^kubemix: ${f.flag.replace(/[-]/g, '\\-')} `, 'm'), r.stderr);
        assert.match(r.stderr, hostile.says, r.stderr);
        assert.match(r.stderr, f.code, r.stderr);
        assert.equal(hasStackTrace(r.stderr), false, r.stderr);
        assert.deepEqual(snapshot(), before, 'something under the scratch folder changed');
        assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      });
    }
  }
});

describe('a plan directory whose plan.json is hostile', () => {
  for (const [name, make] of [
    ['a link to a zero device', (p: string) => symlinkSync(at('zero-device'), p)],
    ['a FIFO', (p: string) => execFileSync('mkfifo', [p])],
    ['a directory', (p: string) => mkdirSync(p)],
    ['a link loop', (p: string) => symlinkSync(p, p)],
  ] as const) {
    it(`plan.json is ${name}: exit 2 naming it, at once`, async () => {
      const dir = at(`plan-${name.replace(/\W+/g, '-')}`);
      mkdirSync(dir);
      make(join(dir, 'plan.json'));
      const started = Date.now();
      const r = await runCli(['up', '--plan', dir, '--state-dir', state], { cwd: tmp.dir });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /plan\.json: (is a|is a symbolic link)/, r.stderr);
      assert.match(r.stderr, /\[plan\.unreadable\]/);
      assert.ok(Date.now() - started < 5000);
    });
  }
});
