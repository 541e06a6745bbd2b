// Writes dist/vendor/yaml.cjs: the yaml package's CommonJS files (dist/*.js)
// in one file, each wrapped in a function and required through a small table
// of its own. Part of `npm run build`. Node 20 spends most of yaml's load time
// finding, reading and compiling its 74 files one by one (~75 ms of CPU here,
// ~22 ms as one file), and `kubemix validate` needs yaml on every run.
// src/spec/yaml-lib.ts falls back to the package when this file is missing.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

const root = dirname(createRequire(import.meta.url).resolve('yaml'));
const version = JSON.parse(readFileSync(join(root, '..', 'package.json'), 'utf8')).version;

function files(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return files(path);
      return path.endsWith('.js') ? [relative(root, path).split(sep).join('/')] : [];
    });
}

const modules = files(root).map(
  (file) =>
    `${JSON.stringify(file)}: function (module, exports, require) {\n${readFileSync(join(root, file), 'utf8')}\n},`,
);
const text = `'use strict';
// yaml ${version} (ISC licence, https://github.com/eemeli/yaml), its dist/*.js files in one: scripts/bundle-yaml.mjs.
const files = {
${modules.join('\n')}
};
const path = require('node:path');
const cache = new Map();
function load(file) {
  const cached = cache.get(file);
  if (cached !== undefined) return cached.exports;
  const module = { exports: {} };
  cache.set(file, module);
  const dir = path.posix.dirname(file);
  const local = (id) => (id.startsWith('.') ? load(path.posix.join(dir, id)) : require(id));
  files[file].call(module.exports, module, module.exports, local);
  return module.exports;
}
module.exports = load('index.js');
`;
const out = new URL('../dist/vendor/yaml.cjs', import.meta.url);
mkdirSync(new URL('.', out), { recursive: true });
writeFileSync(out, text);
