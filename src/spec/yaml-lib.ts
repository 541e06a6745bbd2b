// The yaml library for the spec reader: the one-file copy `npm run build`
// writes (dist/vendor/yaml.cjs, scripts/bundle-yaml.mjs), which loads in a
// third of the package's time on Node 20, or the package itself when a build
// made by `tsc` alone has no copy. Both are the same code of the installed
// yaml version; test/yaml-bundle.test.ts compares them.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);
/** dist/vendor/yaml.cjs, from dist/src/spec/. */
export const YAML_BUNDLE = '../../vendor/yaml.cjs';

function loadYamlLibrary(): typeof Yaml {
  try {
    return require(YAML_BUNDLE) as typeof Yaml;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    return require('yaml') as typeof Yaml;
  }
}

export const YAML: typeof Yaml = loadYamlLibrary();
