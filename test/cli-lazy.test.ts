// `kubemix --help` lists the subcommands from a table (src/cli/commands/index.ts)
// so that no command module loads before one runs; the table must say what
// each module declares. And the command a word names is the one that loads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { COMMANDS, requestedCommand } from '../src/cli/commands/index.js';
import { processIo } from '../src/cli/io.js';

describe('lazily loaded subcommands', () => {
  const io = processIo(new AbortController().signal);
  for (const entry of COMMANDS) {
    it(`${entry.name}: the help table matches what its module declares`, async () => {
      const program = new Command('kubemix');
      (await entry.load())(program, io);
      const declared = program.commands.find((c) => c.name() === entry.name);
      assert.ok(declared, `module of ${entry.name} registers no command of that name`);
      assert.equal(entry.description, declared.description());
      assert.equal(entry.term, program.createHelp().subcommandTerm(declared));
    });
  }

  it('finds the command after global flags, and the one `help` asks about', () => {
    assert.equal(requestedCommand(['--json', '--log-level', 'debug', 'plan', 'x.yaml'])?.name, 'plan');
    assert.equal(requestedCommand(['help', 'lint'])?.name, 'lint');
    assert.equal(requestedCommand(['-v', 'up', '--plan', 'dir'])?.name, 'up');
    assert.equal(requestedCommand(['--version']), undefined);
    assert.equal(requestedCommand(['--log-level', 'validate']), undefined);
    assert.equal(requestedCommand(['bogus']), undefined);
  });
});
