// `kubemix guard install`: every manifest valid against the Kubernetes OpenAPI
// schemas (kubernetes-models), the serving certificate chains to the CA in
// caBundle and names the Service, the key file is 0600.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { generateClusterCa } from '../src/exec/cluster-ca.js';
import { runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

type Obj = Record<string, any>;
const tmp = scratch('guard-install');
after(() => tmp.remove());

async function modelClass(apiVersion: string, kind: string): Promise<new (o: Obj) => { validate(): void }> {
  const modules: Record<string, () => Promise<Record<string, unknown>>> = {
    v1: () => import('kubernetes-models/v1'),
    'apps/v1': () => import('kubernetes-models/apps/v1'),
    'policy/v1': () => import('kubernetes-models/policy/v1'),
    'admissionregistration.k8s.io/v1': () => import('kubernetes-models/admissionregistration.k8s.io/v1'),
    'rbac.authorization.k8s.io/v1': () => import('kubernetes-models/rbac.authorization.k8s.io/v1'),
  };
  const load = modules[apiVersion];
  assert.ok(load !== undefined, `no schema module for ${apiVersion}`);
  const cls = (await load())[kind];
  assert.equal(typeof cls, 'function', `no schema for ${apiVersion} ${kind}`);
  return cls as new (o: Obj) => { validate(): void };
}

/** Both files' documents, each valid against its OpenAPI schema. */
async function validDocs(dir: string): Promise<Obj[]> {
  const docs = ['guard.yaml', 'secret.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(join(tmp.dir, dir, f), 'utf8')).map((d) => d.toJS() as Obj),
  );
  for (const d of docs) {
    const Model = await modelClass(d['apiVersion'], d['kind']);
    assert.doesNotThrow(() => new Model(d).validate(), `${d['kind']} ${d['metadata']?.['name']}`);
  }
  return docs;
}

it('renders valid manifests with the CA bundle, failure policy and namespace exclusions', async () => {
  const ca = generateClusterCa();
  writeFileSync(join(tmp.dir, 'ca.crt'), ca.cert);
  writeFileSync(join(tmp.dir, 'ca.key'), ca.key, { mode: 0o600 });
  const res = await runCli(
    [
      'guard',
      'install',
      '--cluster',
      'k8s-libvirt-1-1-1',
      '--ca-cert',
      'ca.crt',
      '--ca-key',
      'ca.key',
      '--failure-policy',
      'Ignore',
      '--out',
      'out',
      '--insecure-registry',
      'Registry.Lab:5000',
    ],
    { cwd: tmp.dir },
  );
  assert.equal(res.code, 0, res.stderr);
  assert.ok(!res.stdout.includes('PRIVATE KEY'));
  assert.equal(statSync(join(tmp.dir, 'out', 'secret.yaml')).mode & 0o777, 0o600);
  const docs = await validDocs('out');
  // secret.yaml first in the printed command, so it carries the Namespace too (applying it twice changes nothing).
  assert.match(res.stdout, /apply with: kubectl apply -f out\/secret\.yaml -f out\/guard\.yaml/);
  assert.deepEqual(
    parseAllDocuments(readFileSync(join(tmp.dir, 'out', 'secret.yaml'), 'utf8')).map((d) => (d.toJS() as Obj)['kind']),
    ['Namespace', 'Secret'],
  );
  const kinds = docs
    .filter((d, i) => d['kind'] !== 'Namespace' || docs.findIndex((x) => x['kind'] === 'Namespace') === i)
    .map((d) => d['kind'])
    .sort();
  assert.deepEqual(kinds, [
    'ClusterRole',
    'ClusterRoleBinding',
    'Deployment',
    'MutatingWebhookConfiguration',
    'Namespace',
    'PodDisruptionBudget',
    'Secret',
    'Service',
    'ServiceAccount',
    'ValidatingWebhookConfiguration',
  ]);
  // Least privilege: get on secrets, nothing else, bound to the webhook's own service account.
  const role = docs.find((d) => d['kind'] === 'ClusterRole') as Obj;
  assert.deepEqual(role['rules'], [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
  const binding = docs.find((d) => d['kind'] === 'ClusterRoleBinding') as Obj;
  assert.deepEqual(binding['roleRef'], {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: role['metadata']['name'],
  });
  assert.deepEqual(binding['subjects'], [
    { kind: 'ServiceAccount', name: 'kubemix-guard', namespace: 'kubemix-guard' },
  ]);
  const deployment = docs.find((d) => d['kind'] === 'Deployment') as Obj;
  assert.equal(deployment['spec']['template']['spec']['serviceAccountName'], 'kubemix-guard');
  const args = deployment['spec']['template']['spec']['containers'][0]['args'] as string[];
  assert.deepEqual(args.slice(-2), ['--insecure-registry', 'registry.lab:5000']);
  assert.ok(!args.includes('--no-pull-secrets'));
  assert.equal(deployment['spec']['replicas'], 2);
  assert.equal(deployment['spec']['template']['spec']['nodeSelector']['kubernetes.io/os'], 'linux');
  assert.deepEqual(deployment['spec']['template']['spec']['os'], { name: 'linux' });
  // With one Linux worker, a drain must find somewhere for the second replica: the control plane.
  assert.ok(
    (deployment['spec']['template']['spec']['tolerations'] as Obj[]).some(
      (t) => t['key'] === 'node-role.kubernetes.io/control-plane' && t['effect'] === 'NoSchedule',
    ),
    'the control-plane taint is tolerated',
  );
  // The server runs as the image's user, not root; the kubelet writes the TLS secret's files as root:root with
  // defaultMode, and with fsGroup makes that their group and adds group read (pkg/volume/volume_linux.go).
  const pod = deployment['spec']['template']['spec'] as Obj;
  const ctx = pod['securityContext'] as Obj;
  const tlsVolume = (pod['volumes'] as Obj[]).find((v) => v['name'] === 'tls') as Obj;
  const mode = (tlsVolume['secret']['defaultMode'] as number) | (ctx['fsGroup'] === undefined ? 0 : 0o440);
  const fileGroup = ctx['fsGroup'] ?? 0;
  const processGroups = [ctx['runAsGroup'], ctx['fsGroup']].filter((g) => g !== undefined);
  const readable = (mode & 0o004) !== 0 || ((mode & 0o040) !== 0 && processGroups.includes(fileGroup));
  assert.ok(ctx['runAsUser'] !== 0 && readable, `the TLS key is readable by uid ${ctx['runAsUser']}`);
  assert.equal(mode & 0o007, 0, 'the TLS key is not readable by others');
  // A slow node gets 5 min to start the server before liveness may restart it; each answer may take 5 s.
  const container = deployment['spec']['template']['spec']['containers'][0] as Obj;
  assert.deepEqual(container['startupProbe'], {
    ...container['livenessProbe'],
    periodSeconds: 5,
    failureThreshold: 60,
  });
  assert.equal(container['livenessProbe']['timeoutSeconds'], 5);
  assert.equal(container['readinessProbe']['timeoutSeconds'], 5);
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const hook = (docs.find((d) => d['kind'] === kind) as Obj)['webhooks'][0] as Obj;
    assert.equal(hook['failurePolicy'], 'Ignore');
    assert.equal(hook['sideEffects'], 'None');
    assert.deepEqual(hook['admissionReviewVersions'], ['v1']);
    assert.deepEqual(hook['namespaceSelector']['matchExpressions'][0]['values'], ['kube-system', 'kubemix-guard']);
    assert.equal(Buffer.from(hook['clientConfig']['caBundle'], 'base64').toString(), ca.cert);
  }
  const secret = docs.find((d) => d['kind'] === 'Secret') as Obj;
  const cert = new X509Certificate(Buffer.from(secret['data']['tls.crt'], 'base64'));
  assert.ok(cert.verify(new X509Certificate(ca.cert).publicKey));
  assert.ok(cert.checkHost('kubemix-guard.kubemix-guard.svc'));
});

it('--no-pull-secrets: no RBAC, no service-account token, and guard serve told so', async () => {
  const res = await runCli(
    [
      'guard',
      'install',
      '--cluster',
      'k8s-libvirt-1-1-1',
      '--ca-cert',
      'ca.crt',
      '--ca-key',
      'ca.key',
      '--out',
      'out-np',
      '--no-pull-secrets',
    ],
    { cwd: tmp.dir },
  );
  assert.equal(res.code, 0, res.stderr);
  const docs = await validDocs('out-np');
  assert.deepEqual(
    docs.filter((d) => String(d['kind']).startsWith('ClusterRole')),
    [],
  );
  assert.equal((docs.find((d) => d['kind'] === 'ServiceAccount') as Obj)['automountServiceAccountToken'], false);
  const deployment = docs.find((d) => d['kind'] === 'Deployment') as Obj;
  assert.ok(
    (deployment['spec']['template']['spec']['containers'][0]['args'] as string[]).includes('--no-pull-secrets'),
  );
  const bad = await runCli(
    [
      'guard',
      'install',
      '--cluster',
      'k8s-libvirt-1-1-1',
      '--ca-cert',
      'ca.crt',
      '--ca-key',
      'ca.key',
      '--out',
      'out-bad',
      '--insecure-registry',
      'http://x',
    ],
    { cwd: tmp.dir },
  );
  assert.equal(bad.code, 2);
});

it('refuses a bad failure policy and a missing CA', async () => {
  const bad = await runCli(
    ['guard', 'install', '--cluster', 'k8s-libvirt-1-1-1', '--failure-policy', 'Maybe', '--out', 'o2'],
    { cwd: tmp.dir },
  );
  assert.equal(bad.code, 2);
  const noCa = await runCli(['guard', 'install', '--cluster', 'k8s-libvirt-1-1-1', '--out', 'o3'], { cwd: tmp.dir });
  assert.equal(noCa.code, 2);
  assert.match(noCa.stderr, /no CA/);
});
