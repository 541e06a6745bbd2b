// Writes test/fixtures/calico/crd-schemas.json: the openAPIV3Schema of the
// Calico CRDs kubemix's manifests use, and test/fixtures/calico/crds.json: those
// CRDs whole (less descriptions), for the real API server (test/kube-apiserver-real.test.ts), taken from projectcalico/calico's
// manifests/operator-crds.yaml at a release tag. Installation's spec keeps
// only the fields kubemix sets and loses its status (the whole schema is
// ~630 kB of component overrides); descriptions are dropped (they do not
// validate). The tests treat every field outside the kept schema as unknown.
// Usage: git -C <calico clone> show v3.32.1:manifests/operator-crds.yaml | node tools/calico-crd-fixture.mjs v3.32.1 <commit>
import { readFileSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const [tag, commit] = process.argv.slice(2);
if (tag === undefined || commit === undefined)
  throw new Error('usage: calico-crd-fixture.mjs <tag> <commit> < operator-crds.yaml');
const KEEP_INSTALLATION = ['calicoNetwork', 'cni', 'serviceCIDRs', 'variant', 'windowsNodes'];
const CRDS = {
  Installation: 'installations.operator.tigera.io',
  FelixConfiguration: 'felixconfigurations.crd.projectcalico.org',
  IPAMConfig: 'ipamconfigs.crd.projectcalico.org',
};
function withoutDescriptions(v) {
  if (Array.isArray(v)) return v.map(withoutDescriptions);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).flatMap(([k, x]) => (k === 'description' ? [] : [[k, withoutDescriptions(x)]])),
  );
}

const docs = parseAllDocuments(readFileSync(0, 'utf8'))
  .map((d) => d.toJS())
  .filter((d) => d?.kind === 'CustomResourceDefinition');
const schemas = {};
for (const [kind, name] of Object.entries(CRDS)) {
  const crd = docs.find((d) => d.metadata.name === name);
  if (crd === undefined) throw new Error(`${name} not found`);
  const version = crd.spec.versions.find((v) => v.storage);
  const schema = JSON.parse(JSON.stringify(version.schema.openAPIV3Schema));
  if (kind === 'Installation') {
    const spec = schema.properties.spec;
    spec.properties = Object.fromEntries(KEEP_INSTALLATION.map((k) => [k, spec.properties[k]]));
    delete schema.properties.status;
  }
  schemas[kind] = { group: crd.spec.group, version: version.name, schema: withoutDescriptions(schema) };
}
const out = {
  source: { repository: 'projectcalico/calico', path: 'manifests/operator-crds.yaml', tag, commit },
  prunedInstallationSpecTo: KEEP_INSTALLATION,
  schemas,
};
writeFileSync(
  new URL('../test/fixtures/calico/crd-schemas.json', import.meta.url),
  `${JSON.stringify(out, null, 1)}\n`,
);
// The CRDs as a cluster gets them (every version, scope, names, validation rules), one per line.
const whole = Object.values(CRDS).map((name) => withoutDescriptions(docs.find((d) => d.metadata.name === name)));
writeFileSync(
  new URL('../test/fixtures/calico/crds.json', import.meta.url),
  `{"source": ${JSON.stringify(out.source)},\n"crds": [\n${whole.map((c) => JSON.stringify(c)).join(',\n')}\n]}\n`,
);
