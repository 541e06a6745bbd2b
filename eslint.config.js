// ESLint (flat config): typescript-eslint's recommended rules, no import cycles
// between files (type-only imports included), the layering of
// docs/architecture.md as import rules, and render/ and cli/ reading only the
// resolved model (tools/eslint-imports.js).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import imports from './tools/eslint-imports.js';
import quoting from './tools/eslint-quoting.js';

const kubemix = { meta: { name: 'kubemix' }, rules: { ...imports.rules, ...quoting.rules } };

/**
 * Imports the architecture never allows: [importing folder, imported folder, why].
 * The pure core (spec, model, render, plan) does no I/O and draws no screen; the
 * executor emits events the CLI renders; model and transport sit below plan.
 */
export const NEVER = [
  ...['spec', 'model', 'render', 'plan'].flatMap((core) => [
    [core, 'exec', 'the core (spec, model, render, plan) is pure: no executor'],
    [core, 'transport', 'the core (spec, model, render, plan) is pure: no transport'],
    [core, 'cli', 'the core (spec, model, render, plan) draws no screen'],
  ]),
  ['exec', 'cli', 'the executor emits events; the CLI renders them'],
  ['model', 'plan', 'the model owns the vocabulary plan uses, not the other way round'],
  ['transport', 'plan', 'the transport knows hosts and commands, not plans'],
];

/** Folders after model/ read only the resolved model (src/model/resolve.ts), never the raw spec. */
export const RESOLVED_MODEL_ONLY = ['render', 'plan', 'interop', 'cli'];

/**
 * Where script and config text is built: no quote around a value by hand
 * (kubemix/no-hand-quote), only through these escapers (src/util/escape and
 * their local short names). Not yet: render/windows (XML and PowerShell
 * attributes of numbers and constants the rule cannot tell from values).
 */
export const HAND_QUOTE = {
  folders: ['plan', 'render/linux', 'render/containerd', 'diagnose', 'drivers', 'exec', 'transport', 'verify'],
  escapers: [
    'shellQuote',
    'psQuote',
    'q',
    'x',
    'xml',
    'xmlEscape',
    'tomlString',
    'tomlBasicString',
    'yamlString',
    'y',
    'iniValue',
    'systemdQuote',
  ],
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'schema/',
      'test/golden/',
      'test/lint-corpus/',
      'test/lint-fix/',
      'test/spec-corpus/',
      'test/fixtures/',
      // Generated from the zod schema by `npm run schema`; src/spec/parser.test.ts keeps it current.
      'src/spec/parser.generated.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { kubemix },
    languageOptions: { parserOptions: { ecmaVersion: 2022, sourceType: 'module' } },
    rules: {
      'kubemix/no-cycle': 'error',
      'kubemix/layering': ['error', NEVER.map(([from, to, why]) => ({ from, to, why }))],
      'kubemix/resolved-model': ['error', RESOLVED_MODEL_ONLY],
      'kubemix/shell-code': 'error',
      'kubemix/no-hand-quote': ['error', HAND_QUOTE],
      // Unused bindings are errors, except the conventional `_` placeholders.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Finding control characters is the job of the escapers, the spec patterns and the
      // terminal filter (and of their tests): a regex naming them is intended, not a slip.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests walk parsed YAML and JSON documents whose shape they assert, not declare.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'kubemix/shell-code': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
