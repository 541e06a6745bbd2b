// Cluster-aware behaviour through the lint API with LintCluster objects (the
// CLI's --cluster flag arrives with the cluster spec).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMixed, lintClusterFor, WINDOWS_TAINT, type LintCluster } from '../src/lint/cluster.js';
import { lintSources } from '../src/lint/engine.js';
import { staticResolver } from '../src/lint/image-os.js';
import { RULES } from '../src/lint/rules/index.js';
import { WINDOWS } from '../src/matrix/index.js';

const pod = (name: string, spec: string): string =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n${spec}`;
const UNPLACED_APP = pod('app', '  containers:\n    - name: app\n      image: registry.example.com/app:1.0\n');
const WIN_RC = (rc: string, image: string) =>
  pod('w', `  os: {name: windows}\n  runtimeClassName: ${rc}\n  containers:\n    - name: app\n      image: ${image}\n`);

async function rules(text: string, options: Parameters<typeof lintSources>[1] = {}): Promise<string[]> {
  return (await lintSources([{ path: 'm.yaml', text }], options)).findings.map((f) => f.rule);
}

test('lintClusterFor takes builds from the matrix and follows the RuntimeClass convention', () => {
  const cluster = lintClusterFor(WINDOWS.map((w) => w.os));
  assert.deepEqual(
    cluster.windows,
    WINDOWS.map((w) => ({ os: w.os, build: w.build, runtimeClass: w.os })),
  );
  assert.deepEqual(cluster.taint, WINDOWS_TAINT);
  assert.throws(() => lintClusterFor(['windows-2019']), /unknown Windows OS id/);
  assert.equal(isMixed(undefined), true);
  assert.equal(isMixed(lintClusterFor([])), false);
  assert.equal(isMixed(lintClusterFor(['windows-2022'], { hasLinux: false })), false);
});

test('placement is only required in a mixed cluster', async () => {
  assert.deepEqual(await rules(UNPLACED_APP), ['placement/missing-os']);
  assert.deepEqual(await rules(UNPLACED_APP, { cluster: lintClusterFor([]) }), []);
  assert.deepEqual(await rules(UNPLACED_APP, { cluster: lintClusterFor(['windows-2022']) }), ['placement/missing-os']);
});

test('rules that need a cluster are skipped without one', async () => {
  const text = WIN_RC('windows-2019', 'mcr.microsoft.com/windows/nanoserver:ltsc2019');
  assert.deepEqual(await rules(text), []);
  assert.deepEqual(await rules(text, { cluster: lintClusterFor(['windows-2022']) }), [
    'placement/unknown-runtimeclass',
    'image/windows-build-mismatch',
  ]);
  assert.ok(RULES.filter((r) => r.needsCluster).length >= 4);
});

test('a RuntimeClass pins the build the image must match', async () => {
  const cluster = lintClusterFor(['windows-2022', 'windows-2025']);
  assert.deepEqual(
    await rules(WIN_RC('windows-2025', 'mcr.microsoft.com/windows/nanoserver:ltsc2025'), { cluster }),
    [],
  );
  assert.deepEqual(await rules(WIN_RC('windows-2025', 'mcr.microsoft.com/windows/nanoserver:ltsc2022'), { cluster }), [
    'image/windows-build-mismatch',
  ]);
});

test('HostProcess containers are exempt from the build match', async () => {
  const text = pod(
    'hp',
    [
      '  os: {name: windows}',
      '  runtimeClassName: windows-2022',
      '  hostNetwork: true',
      '  securityContext: {windowsOptions: {hostProcess: true, runAsUserName: "NT AUTHORITY\\\\SYSTEM"}}',
      '  containers:',
      '    - name: c',
      '      image: mcr.microsoft.com/windows/nanoserver:ltsc2019',
      '',
    ].join('\n'),
  );
  assert.deepEqual(await rules(text, { cluster: lintClusterFor(['windows-2022']) }), []);
});

test('findings say where the image OS came from', async () => {
  const resolver = staticResolver(
    { 'registry.example.com/app:1.0': { os: 'windows', osVersion: '10.0.26100' } },
    'registry',
  );
  const cluster: LintCluster = lintClusterFor(['windows-2022']);
  const report = await lintSources([{ path: 'm.yaml', text: UNPLACED_APP }], { cluster, resolver });
  assert.deepEqual(
    report.findings.map((f) => [f.rule, f.osSource]),
    [
      ['placement/missing-os', 'registry'],
      ['image/windows-build-mismatch', 'registry'],
    ],
  );
});

test('DSR on the Windows nodes makes externalTrafficPolicy: Local fine', async () => {
  const text = [
    WIN_RC('windows-2022', 'mcr.microsoft.com/windows/nanoserver:ltsc2022').replace(
      'metadata: {name: w}',
      'metadata: {name: w, labels: {app: w}}',
    ),
    '---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  selector: {app: w}\n',
  ].join('');
  assert.deepEqual(await rules(text, { cluster: lintClusterFor(['windows-2022']) }), [
    'service/external-traffic-local',
  ]);
  assert.deepEqual(await rules(text, { cluster: lintClusterFor(['windows-2022'], { windowsDsr: true }) }), []);
});

test('output order does not depend on input order', async () => {
  const a = { path: 'a.yaml', text: UNPLACED_APP };
  const b = { path: 'b.yaml', text: WIN_RC('windows-2019', 'x') };
  const cluster = lintClusterFor(['windows-2022']);
  const one = await lintSources([a, b], { cluster });
  const two = await lintSources([b, a], { cluster });
  assert.deepEqual(one.findings, two.findings);
});
