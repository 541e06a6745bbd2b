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
  'src/render/raw.ts': [
    'type M = { spec: { proxy?: string }; cluster: { cni: { backend: string } } };',
    'export const proxy = (model: M): string | undefined => model.spec.proxy;',
    "export const vxlan = (model: M): boolean => model.cluster.cni.backend === 'vxlan';",
    'export const spec = ({ spec }: M): unknown => spec;',
    '',
  ].join('\n'),
  'src/render/resolved.ts': [
    'type M = { proxy?: string; overlay: { vxlan?: { vni: number } }; cluster: { cni: { backend: string } } };',
    'export const proxy = (model: M): string | undefined => model.proxy;',
    'export const vxlan = (model: M): boolean => model.overlay.vxlan !== undefined;',
    'export const shown = (model: M): string => `cni ${model.cluster.cni.backend}`;',
    'export const manifest = { spec: { replicas: 1 } };',
    '',
  ].join('\n'),
  'src/spec/raw.ts': 'export const proxy = (doc: { spec: { proxy?: string } }): unknown => doc.spec.proxy;\n',
  // The hand quote of issue #31 (download.ts), a computed shellCode(), and what is allowed.
  'src/plan/tasks/hand.ts': [
    'declare const shellCode: (t: string) => unknown;',
    'declare const shellQuote: (t: string) => string;',
    'declare const shell: (s: TemplateStringsArray, ...v: unknown[]) => unknown;',
    'export const fetch = (url: string): string => `curl -o "$file" \'${url}\'`;',
    'export const echo = (name: string): string => `echo "${name}"`;',
    'export const code = (url: string): unknown => shellCode(`curl ${url}`);',
    "export const ok1 = (url: string): string => `curl ${shellQuote(url)} '$x'`;",
    "export const ok2 = (url: string): unknown => shell`curl '${url}'`;",
    "export const ok3 = (): unknown => shellCode('set -eu');",
    '',
  ].join('\n'),
  'src/render/windows/elsewhere.ts': "export const ps = (v: string): string => `'${v}'`;\n",
  // The libvirt driver's scripts as they were before the shell template: drivers/ is in the rule too.
  'src/drivers/libvirt/tasks/hand.ts': 'export const vars = (d: string): string => `d=\'${d}\'\\ng="$dir/$d"\\n`;\n',
};

describe('eslint import rules (kubemix/no-cycle, kubemix/layering, kubemix/resolved-model)', async () => {
  const tmp = scratch('eslint-rules');
  after(() => tmp.remove());
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(tmp.dir, path)), { recursive: true });
    writeFileSync(join(tmp.dir, path), text);
  }
  const config = (await import(pathToFileURL(repoPath('eslint.config.js')).href)) as {
    NEVER: [string, string, string][];
    RESOLVED_MODEL_ONLY: string[];
    HAND_QUOTE: { folders: string[]; escapers: string[] };
  };
  type Plugin = { default: { rules: Record<string, unknown> } };
  const imports = (await import(pathToFileURL(repoPath('tools', 'eslint-imports.js')).href)) as Plugin;
  const quoting = (await import(pathToFileURL(repoPath('tools', 'eslint-quoting.js')).href)) as Plugin;
  const plugin = {
    default: { rules: { ...imports.default.rules, ...quoting.default.rules } } as NonNullable<
      Linter.Config['plugins']
    >[string],
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
          'kubemix/resolved-model': ['error', config.RESOLVED_MODEL_ONLY],
          'kubemix/shell-code': 'error',
          'kubemix/no-hand-quote': ['error', config.HAND_QUOTE],
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

  it('src/render reading model.spec, destructuring spec or comparing a backend name is refused', () => {
    assert.deepEqual(config.RESOLVED_MODEL_ONLY, ['render', 'plan', 'interop', 'cli']);
    assert.deepEqual(messages('src/render/raw.ts'), [
      'kubemix/resolved-model 2',
      'kubemix/resolved-model 3',
      'kubemix/resolved-model 4',
    ]);
    const text = results.flatMap((r) => r.messages).find((m) => m.ruleId === 'kubemix/resolved-model')?.message ?? '';
    assert.match(text, /src\/render\/ reads the resolved model, not the raw spec/);
  });

  it("resolved reads, printing a backend and a manifest's own spec pass; spec/ is not in the rule", () => {
    assert.deepEqual(messages('src/render/resolved.ts'), []);
    assert.deepEqual(messages('src/spec/raw.ts'), []);
  });

  it('a value quoted by hand in a script builder, and a computed shellCode(), are refused; escapers and the tag pass', () => {
    assert.deepEqual(messages('src/plan/tasks/hand.ts'), [
      'kubemix/no-hand-quote 4',
      'kubemix/no-hand-quote 5',
      'kubemix/shell-code 6',
    ]);
    const text = results.flatMap((r) => r.messages).find((m) => m.ruleId === 'kubemix/no-hand-quote')?.message ?? '';
    assert.match(text, /a value wrapped in '…' by hand/);
    assert.deepEqual(messages('src/render/windows/elsewhere.ts'), []);
    assert.deepEqual(messages('src/drivers/libvirt/tasks/hand.ts'), ['kubemix/no-hand-quote 1']);
  });
});
