// Differential: for every inventory in the corpus, the hosts, groups,
// membership and vars kubemix reads equal what Ansible itself reads
// (`ansible-inventory -i FILE --list --export`, Debian's ansible).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { listFromAnsible, listInventory } from '../src/interop/inventory/list.js';
import { readInventory } from '../src/interop/inventory/read.js';
import { InvalidSpecError } from '../src/errors.js';
import { repoPath } from './helpers/cli.js';

const DIR = repoPath('test', 'fixtures', 'inventories');
const corpus = readdirSync(DIR).filter((f) => /\.(ini|ya?ml)$/.test(f)).sort();
const malformed = readdirSync(`${DIR}/malformed`).sort();

export function ansibleList(file: string): Record<string, unknown> {
  const out = execFileSync('ansible-inventory', ['-i', file, '--list', '--export'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ANSIBLE_LOCAL_TEMP: '/tmp', ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true' },
    timeout: 30_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

export function ansibleMissing(): string | false {
  try {
    execFileSync('ansible-inventory', ['--version'], { stdio: 'ignore', timeout: 30_000 });
    return false;
  } catch {
    return 'ansible-inventory is not installed (Debian package ansible, in scripts/apt-packages.txt)';
  }
}

describe('inventory import reads what ansible-inventory reads', { skip: ansibleMissing() }, () => {
  it('has a corpus of at least 8 inventories, INI and YAML', () => {
    assert.ok(corpus.length >= 8);
    assert.ok(corpus.some((f) => f.endsWith('.ini')) && corpus.some((f) => f.endsWith('.yaml')));
  });
  for (const name of corpus) {
    it(name, () => {
      const file = `${DIR}/${name}`;
      const ours = listInventory(readInventory(readFileSync(file, 'utf8'), file));
      assert.deepEqual(ours, listFromAnsible(ansibleList(file)));
    });
  }
});

describe('malformed inventories fail with a code and file:line', () => {
  for (const name of malformed) {
    it(name, () => {
      const file = `${DIR}/malformed/${name}`;
      const text = readFileSync(file, 'utf8');
      const [, code, line] = /^# expect (\S+) (\d+)/.exec(text) ?? [];
      assert.throws(
        () => readInventory(text, name),
        (error: unknown) => {
          assert.ok(error instanceof InvalidSpecError);
          assert.equal(error.diagnostics[0]?.code, code);
          assert.equal(error.diagnostics[0]?.location, `${name}:${line}`);
          return true;
        },
      );
    });
  }
});
