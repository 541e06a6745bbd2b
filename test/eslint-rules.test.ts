// The repository's import rules (tools/eslint-imports.js, configured in
// eslint.config.js) on a scratch tree: a forbidden import and a cycle (a
// type-only import closing it) fail; an allowed import passes.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { repoPath } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const FILES: Record<string, string> = {
  'src/exec/run.ts': 'export const run = (): number => 1;\n',
  'src/plan/assemble.ts': "import { run } from '../exec/run.js';\nexport const plan = (): number => run();\n",
  'src/net/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
  'src/net/b.ts': "import type { a } from './a.js';\nexport const b = (): number => 2;\nexport type A = typeof a;\n",
  'src/model/ok.ts': "import { b } from '../net/b.js';\nexport const ok = (): number => b();\n",
};

describe('eslint import rules (kubemix/no-cycle, kubemix/layering)', async () => {
  const tmp = scratch('eslint-rules');
  after(() => tmp.remove());
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(tmp.dir, path)), { recursive: true });
    writeFileSync(join(tmp.dir, path), text);
  }
  const config = (await import(pathToFileURL(repoPath('eslint.config.js')).href)) as {
    NEVER: [string, string, string][];
  };
  const plugin = (await import(pathToFileURL(repoPath('tools', 'eslint-imports.js')).href)) as {
    default: NonNullable<Linter.Config['plugins']>[string];
  };
  const eslint = new ESLint({
    cwd: tmp.dir,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser as Linter.Parser },
        plugins: { kubemix: plugin.default },
        rules: {
          'kubemix/no-cycle': 'error',
          'kubemix/layering': ['error', config.NEVER.map(([from, to, why]) => ({ from, to, why }))],
        },
      },
    ],
  });
  const results = await eslint.lintFiles(['src/**/*.ts']);
  const messages = (file: string) =>
    results.find((r) => r.filePath === join(tmp.dir, file))?.messages.map((m) => `${m.ruleId} ${m.line}`) ?? [];

  it('src/plan importing src/exec is refused, with the reason', () => {
    assert.deepEqual(messages('src/plan/assemble.ts'), ['kubemix/layering 1']);
    const text = results.flatMap((r) => r.messages).find((m) => m.ruleId === 'kubemix/layering')?.message ?? '';
    assert.match(text, /src\/plan\/ never imports src\/exec\/ \(src\/exec\/run\.ts\): the core .* is pure/);
  });

  it('both files of a cycle are reported, a type-only import counting', () => {
    assert.deepEqual(messages('src/net/a.ts'), ['kubemix/no-cycle 1']);
    assert.deepEqual(messages('src/net/b.ts'), ['kubemix/no-cycle 1']);
  });

  it('an allowed import (model → net) and the imported file pass', () => {
    assert.deepEqual(messages('src/model/ok.ts'), []);
    assert.deepEqual(messages('src/exec/run.ts'), []);
  });
});
