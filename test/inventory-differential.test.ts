// Differential: for every inventory in the corpus, the hosts, groups,
// membership and vars kubemix reads equal what Ansible itself reads
// (`ansible-inventory -i FILE --list --export`, Debian's ansible).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { listFromAnsible, listInventory } from '../src/interop/inventory/list.js';
import { readInventory } from '../src/interop/inventory/read.js';
import { InvalidSpecError } from '../src/errors.js';
import { ansibleList, ansibleMissing } from './helpers/ansible.js';
import { repoPath } from './helpers/cli.js';

const DIR = repoPath('test', 'fixtures', 'inventories');
const corpus = readdirSync(DIR)
  .filter((f) => /\.(ini|ya?ml)$/.test(f))
  .sort();
const malformed = readdirSync(`${DIR}/malformed`).sort();

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
