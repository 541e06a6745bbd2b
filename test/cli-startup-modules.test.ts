// The commands a user runs dozens of times a day start without the heavy
// modules: `--version` and `--help` load no command module, `validate` loads
// the spec's parser and rules but not SSH, the shell parsers, the registry
// client or the model/render/plan/exec graph. A module-resolution hook
// (node:module register) records every file the real CLI process resolves,
// so an eager import anywhere in the chain fails here instead of silently
// costing start-up time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { repoPath } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kubemix-startup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const HOOKS = `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.startsWith('file:')) (await import('node:fs')).appendFileSync(process.env.KUBEMIX_MODULE_LOG, r.url + '\\n');
  return r;
}
`;
const hooksFile = join(dir, 'hooks.mjs');
writeFileSync(hooksFile, HOOKS);
// The resolve hook sees `import`; `require` (of CommonJS, or of an ES module: spec/parse.ts loads the zod
// schema that way) is recorded by wrapping Module._load. zod's core sets globalThis.__zod_globalConfig when it
// loads, by whatever path, so that is recorded at exit as well.
const REGISTER = `import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(pathToFileURL(hooksFile).href)});
const log = (line) => appendFileSync(process.env.KUBEMIX_MODULE_LOG, line + '\\n');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const file = Module._resolveFilename(request, parent, isMain);
  if (isAbsolute(file)) log(pathToFileURL(file).href);
  return load.apply(this, arguments);
};
process.on('exit', () => log(globalThis.__zod_globalConfig === undefined ? '' : ZOD_CORE));
`;
/** What the log says when zod's core was evaluated. */
const ZOD_CORE = 'node_modules/zod/ (core evaluated)';
const registerFile = join(dir, 'register.mjs');
writeFileSync(registerFile, `const ZOD_CORE = ${JSON.stringify(ZOD_CORE)};\n${REGISTER}`);

/** The files (repository-relative) the CLI process resolved while running `args`. */
function loadedModules(name: string, args: readonly string[], status = 0): string[] {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', registerFile, repoPath('bin/kubemix.js'), ...args], {
    env: { ...process.env, KUBEMIX_MODULE_LOG: log },
    encoding: 'utf8',
  });
  assert.equal(r.status, status, r.stderr);
  const root = pathToFileURL(repoPath()).href;
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))].map((u) => u.replace(root, ''));
}

/** Heavy for start-up: each is needed only by the commands that plan, run, reach hosts or lint. */
const HEAVY: readonly [string, RegExp][] = [
  ['ssh2', /node_modules\/ssh2\//],
  ['tree-sitter parsers', /node_modules\/(web-)?tree-sitter/],
  ['node-forge', /node_modules\/node-forge\//],
  ['registry client', /dist\/src\/registry\//],
  ['model', /dist\/src\/model\//],
  ['render', /dist\/src\/render\//],
  ['plan', /dist\/src\/plan\//],
  ['transport', /dist\/src\/transport\//],
  ['lint', /dist\/src\/lint\//],
  ['drivers (tasks, XML)', /dist\/src\/drivers\/(existing|libvirt\/(?!names\.js))/],
  // local-paths checks the paths a user names (node:fs only); validate reads SPEC through it.
  ['executor', /dist\/src\/exec\/(?!state-dir\.js|durable\.js|local-paths\.js)/],
];

function assertNoHeavy(modules: readonly string[]): void {
  for (const [what, pattern] of HEAVY) {
    const hit = modules.find((m) => pattern.test(m));
    assert.equal(hit, undefined, `loads ${what} (${hit ?? ''})`);
  }
}

describe('start-up loads only what the command needs', () => {
  it('--version and --help load no command module and no parser', () => {
    for (const args of [['--version'], ['--help']]) {
      const modules = loadedModules(args[0]?.slice(2) ?? 'x', args);
      assert.ok(
        modules.some((m) => m.endsWith('dist/src/cli/main.js')),
        'the hook saw the CLI load',
      );
      assert.deepEqual(
        modules.filter((m) => /dist\/src\/cli\/commands\/(?!index\.js)|node_modules\/(zod|yaml)\//.test(m)),
        [],
      );
      assertNoHeavy(modules);
    }
  });

  it('validate loads the spec modules and nothing that plans, renders or connects', () => {
    const modules = loadedModules('validate', ['validate', repoPath('examples/k8s-libvirt-1-1-1.yaml')]);
    assert.ok(
      modules.some((m) => m.endsWith('dist/src/spec/read.js')),
      'the hook saw the spec reader load',
    );
    assertNoHeavy(modules);
  });

  it('validate of a valid spec loads no zod (the generated parser validates it) and yaml as one file', () => {
    const modules = loadedModules('validate-valid', ['validate', repoPath('examples/k8s-libvirt-3-2-1.yaml')]);
    assert.ok(
      modules.some((m) => m.endsWith('dist/src/spec/parser.generated.js')),
      'the hook saw the generated parser load',
    );
    assert.ok(
      modules.some((m) => m.endsWith('dist/vendor/yaml.cjs')),
      'the Module._load wrapper saw the one-file yaml of npm run build',
    );
    assert.deepEqual(
      modules.filter((m) => /node_modules\/(zod|yaml)\/|dist\/src\/spec\/schema\.js/.test(m)),
      [],
    );
  });

  it('validate of an invalid spec does load zod, for the errors (the recording sees it)', () => {
    const spec = join(dir, 'invalid.yaml');
    const text = readFileSync(repoPath('examples/k8s-libvirt-1-1-1.yaml'), 'utf8');
    writeFileSync(spec, text.replace(/^ {2}name: .*$/m, '  name: Not_A_Label'));
    const modules = loadedModules('validate-invalid', ['validate', spec], 2);
    assert.ok(modules.includes(ZOD_CORE), 'zod core evaluated');
    assert.ok(
      modules.some((m) => m.endsWith('dist/src/spec/schema.js')),
      'schema.js required',
    );
  });

  it('plan does load the model and the plan (the hook sees them)', () => {
    const modules = loadedModules('plan', ['plan', '--json', repoPath('examples/k8s-libvirt-1-1-1.yaml')]);
    for (const dirName of ['model', 'plan', 'render']) {
      assert.ok(
        modules.some((m) => m.includes(`dist/src/${dirName}/`)),
        `plan loads dist/src/${dirName}/`,
      );
    }
  });
});
