// Every file kubemix reads back from its state directory, damaged every way
// a disk, an editor or a careless copy damages it: cut short, empty, `null`,
// another JSON type, each field of the wrong type, a directory, a FIFO. Each
// is exit 2 naming the file and how to recover — never a crash (exit 4), a
// hang on the FIFO, or a run that goes on trusting the wrong shape.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasStackTrace, runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('hostile-state');
after(() => tmp.remove());

// Hosts on loopback, port 9 (refused at once): a damaged file let through ends in a refused
// connection, never in traffic anywhere else.
const SPEC = `apiVersion: kubemix.dev/v1alpha1
kind: Cluster
metadata:
  name: hostile
spec:
  kubernetes:
    version: "1.36"
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
writeFileSync(join(tmp.dir, 'spec.yaml'), SPEC);

const ENTRY = { state: 'done', host: 'cp1', inputHash: 'h', attempts: 1 };
const JOURNAL = { version: 1, cluster: 'hostile', planHash: 'p', updatedAt: '', tasks: { t1: ENTRY } };

interface StateFileCase {
  /** Path inside the state directory. */
  readonly file: string;
  /** A document kubemix would have written there. */
  readonly valid: unknown;
  /** Other files the command needs intact. */
  readonly beside?: Record<string, string>;
  /** The command that reads it, given the state directory. */
  readonly argv: (state: string) => string[];
  /** Only these damages (default: all). */
  readonly damages?: readonly string[];
  /** Damages that are no damage here (an empty log: nothing recorded since the snapshot). */
  readonly fine?: readonly string[];
}

const FILES: readonly StateFileCase[] = [
  { file: 'journal.json', valid: JOURNAL, argv: (s) => ['status', 'spec.yaml', '--state-dir', s] },
  {
    file: 'journal.log',
    valid: { id: 't1', entry: ENTRY },
    beside: { 'journal.json': JSON.stringify(JOURNAL) },
    fine: ['empty'],
    argv: (s) => ['status', 'spec.yaml', '--state-dir', s],
  },
  {
    file: 'secrets.json',
    valid: { 'admin-kubeconfig': { value: 'apiVersion: v1', source: 'captured', at: '' } },
    argv: (s) => ['kubeconfig', 'spec.yaml', '--state-dir', s],
  },
  {
    file: 'upgrade.json',
    valid: { from: '1.36.3', to: '1.37.2' },
    argv: (s) => ['upgrade', 'spec.yaml', '--to', '1.37', '--check', '--state-dir', s],
  },
  {
    file: 'patch/roll.json',
    valid: { nodes: ['cp1'], pending: { cp1: { updates: [], rebootRequired: false } } },
    fine: ['nodes: []'],
    argv: (s) => ['patch', 'spec.yaml', '--linux', '--state-dir', s],
  },
  {
    file: 'logs/cp1.log',
    valid: 'a line',
    argv: (s) => ['logs', '--state-dir', s],
    damages: ['a directory', 'a FIFO'],
  },
  {
    file: 'known_hosts',
    valid: '',
    argv: (s) => ['verify', 'spec.yaml', '--state-dir', s],
    damages: ['a directory', 'a FIFO'],
  },
  { file: 'lock', valid: '', argv: (s) => ['up', 'spec.yaml', '--state-dir', s], damages: ['a directory', 'a FIFO'] },
];

/** Each damage: how it is made from the valid document. */
function damages(valid: unknown): [string, (path: string) => void][] {
  const text = typeof valid === 'string' ? valid : JSON.stringify(valid);
  const put = (body: string) => (path: string) => writeFileSync(path, `${body}\n`);
  const out: [string, (path: string) => void][] = [
    ['cut short', put(text.slice(0, Math.floor(text.length / 2)))],
    ['empty', (p) => writeFileSync(p, '')],
    ['null', put('null')],
    ['an array', put('[]')],
    ['a string', put('"x"')],
    ['a directory', (p) => mkdirSync(p)],
    ['a FIFO', (p) => execFileSync('mkfifo', [p])],
  ];
  if (valid !== null && typeof valid === 'object' && !Array.isArray(valid)) {
    for (const key of Object.keys(valid)) {
      out.push([`${key}: null`, put(JSON.stringify({ ...valid, [key]: null }))]);
      out.push([`${key}: []`, put(JSON.stringify({ ...valid, [key]: [] }))]);
      const inner = (valid as Record<string, unknown>)[key];
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
        const first = Object.keys(inner)[0] ?? 'a';
        out.push([`${key}.${first}: null`, put(JSON.stringify({ ...valid, [key]: { [first]: null } }))]);
      }
    }
  }
  return out;
}

describe('a damaged state file: exit 2 naming the file and how to recover', () => {
  let n = 0;
  for (const c of FILES) {
    for (const [damage, make] of damages(c.valid)) {
      if (c.damages !== undefined && !c.damages.includes(damage)) continue;
      if (c.fine?.includes(damage) === true) continue;
      it(`${c.file} ${damage} (kubemix ${c.argv('S')[0]})`, async () => {
        const state = join(tmp.dir, `state-${++n}`);
        mkdirSync(dirname(join(state, c.file)), { recursive: true, mode: 0o700 });
        for (const [name, body] of Object.entries(c.beside ?? {})) writeFileSync(join(state, name), body);
        make(join(state, c.file));
        const started = Date.now();
        const r = await runCli(c.argv(state), { cwd: tmp.dir });
        assert.equal(r.code, 2, `exit ${r.code}\n${r.stderr}`);
        assert.ok(r.stderr.includes(join(state, c.file)), `the file is not named:\n${r.stderr}`);
        assert.match(r.stderr, /^ {2}hint: \S/m, 'no way to recover is named');
        assert.equal(hasStackTrace(r.stderr), false, r.stderr);
        assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
        rmSync(state, { recursive: true, force: true });
      });
    }
  }
});
