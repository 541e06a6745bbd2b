import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clusterSchemaText } from './schema-file.js';

test('schema/cluster.schema.json is current (npm run schema rewrites it)', () => {
  const committed = readFileSync(
    fileURLToPath(new URL('../../../schema/cluster.schema.json', import.meta.url)),
    'utf8',
  );
  assert.equal(committed, clusterSchemaText());
});

test('every example starts with the yaml-language-server $schema comment', () => {
  for (const name of ['k8s-libvirt-1-1-1', 'k8s-libvirt-3-2-1', 'k8s-libvirt-3-0-2', 'existing-host-gw']) {
    const text = readFileSync(fileURLToPath(new URL(`../../../examples/${name}.yaml`, import.meta.url)), 'utf8');
    assert.match(text, /^# yaml-language-server: \$schema=\.\.\/schema\/cluster\.schema\.json\n/);
  }
});
