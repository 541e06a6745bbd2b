import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportFailure } from '../src/cli/failure.js';
import { writePlanDir } from '../src/cli/plan-dir.js';
import { VERSION } from '../src/version.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';

test('--version matches package.json; --help exits 0', async () => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version: string };
  assert.equal(VERSION, pkg.version);
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.equal(version.stdout.trim(), pkg.version);
  const help = await runCli(['plan', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--hypervisors/);
});

test('validate --json prints one document: ok with warnings', async () => {
  const r = await runCli(['validate', '--json', 'examples/k8s-libvirt-1-1-1.yaml']);
  assert.equal(r.code, 0);
  const doc = JSON.parse(r.stdout) as { ok: boolean; errors: unknown[]; warnings: { code: string }[] };
  assert.equal(doc.ok, true);
  assert.deepEqual(doc.errors, []);
  assert.ok(doc.warnings.some((w) => w.code === 'nodes.control-plane-untainted'));
});

test('plan --json prints the plan document and nothing else on stdout', async () => {
  const r = await runCli(['plan', '--json', 'k8s-libvirt-1-1-1']);
  assert.equal(r.code, 0);
  const plan = JSON.parse(r.stdout) as { kind: string; hash: string };
  assert.equal(plan.kind, 'Plan');
  assert.match(plan.hash, /^[0-9a-f]{64}$/);
});

test('plan --audit prints the authorization, traffic and credential audits (text and --json) and exits 0 when they pass', async () => {
  const text = await runCli(['plan', '--audit', 'examples/k8s-libvirt-1-1-1.yaml']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^flanneld \(HostProcess\) \(windows\) on compute-01 — ServiceAccount kube-flannel\/flannel-windows \(projected \(pod\)\)$/m,
  );
  assert.match(
    text.stdout,
    /ok {3}list nodes \(all\) {2}\[RBAC ClusterRole\/flannel-windows via ClusterRoleBinding\/flannel-windows\]/,
  );
  assert.match(text.stdout, /guard webhook \(linux\)/);
  assert.match(text.stdout, /authorization audit: every needed request is allowed, nothing broader\n/);
  assert.match(text.stdout, /^ {2}ok {3}icmpv4 type 8 from the other nodes .*\[kubemix-icmpv4-echo /m);
  assert.match(text.stdout, /traffic audit: every needed flow is allowed by the firewall each node gets\n/);
  assert.match(
    text.stdout,
    /^flanneld \(HostProcess\) \(windows\) on compute-01 — ServiceAccount kube-flannel\/flannel-windows, the pod's projected token \(explicit, 3600 s\)$/m,
  );
  assert.match(
    text.stdout,
    /credential audit: every credential is renewed before it expires, without kubemix, and is its own per node\n$/,
  );
  const json = await runCli(['plan', '--audit', '--json', 'k8s-libvirt-1-1-1']);
  assert.equal(json.code, 0);
  const doc = JSON.parse(json.stdout) as {
    ok: boolean;
    components: unknown[];
    traffic: { ok: boolean };
    credentials: { ok: boolean };
  };
  assert.equal(doc.ok, true);
  assert.equal(doc.traffic.ok, true);
  assert.equal(doc.credentials.ok, true);
  assert.ok(doc.components.length > 5);
});

test('settings: a bad --log-level or KUBEMIX_LOG_LEVEL is exit 2 naming its source', async () => {
  const flag = await runCli(['validate', '--log-level', 'loud', 'k8s-libvirt-1-1-1']);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--log-level/);
  const env = await runCli(['validate', 'k8s-libvirt-1-1-1'], { env: { KUBEMIX_LOG_LEVEL: 'chatty' } });
  assert.equal(env.code, 2);
  assert.match(env.stderr, /KUBEMIX_LOG_LEVEL/);
  const out = mkdtempSync(join(tmpdir(), 'kubemix-level-'));
  try {
    const normal = await runCli(['plan', 'k8s-libvirt-1-1-1', '--out', join(out, 'a')]);
    assert.match(normal.stderr, /plan written to/);
    const quiet = await runCli(['plan', 'k8s-libvirt-1-1-1', '--out', join(out, 'b'), '--log-level', 'error']);
    assert.equal(quiet.code, 0);
    assert.equal(quiet.stderr, '');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('an unexpected exception becomes exit 4 with a crash log and a "please report" line', () => {
  let stderr = '';
  let stdout = '';
  const io = {
    stdout: (t: string) => void (stdout += t),
    stderr: (t: string) => void (stderr += t),
    env: {},
    cwd: '/',
    isTty: false,
    signal: new AbortController().signal,
  };
  const code = reportFailure(new TypeError('boom'), ['plan', '--json'], io);
  assert.equal(code, 4);
  const log = /Crash log: (\S+)/.exec(stderr)?.[1] ?? assert.fail(stderr);
  assert.match(readFileSync(log, 'utf8'), /TypeError: boom/);
  assert.match(stderr, /Please report/);
  assert.equal(hasStackTrace(stderr), false);
  assert.equal((JSON.parse(stdout) as { error: { code: string } }).error.code, 'internal');
  rmSync(join(log, '..'), { recursive: true, force: true });
});

test('a failed plan write leaves the previous DIR untouched and no temporary directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-atomic-'));
  try {
    const dir = join(root, 'out');
    mkdirSync(dir);
    writeFileSync(join(dir, 'plan.json'), 'previous');
    const clash = {
      node: 'n',
      remotePath: '/x',
      mode: '0644',
      owner: 'root',
      content: 'a',
      localPath: 'artifacts/n/x',
    };
    const inside = { ...clash, remotePath: '/x/y', localPath: 'artifacts/n/x/y' };
    const plan = JSON.parse(
      readFileSync(repoPath('test', 'golden', 'plans', 'k8s-libvirt-1-1-1.plan.json'), 'utf8'),
    ) as never;
    assert.throws(() => writePlanDir(dir, { plan, files: [clash, inside] }));
    assert.equal(readFileSync(join(dir, 'plan.json'), 'utf8'), 'previous');
    assert.deepEqual(readdirSync(root), ['out']);
    writePlanDir(dir, { plan, files: [clash] });
    assert.equal(existsSync(join(dir, 'artifacts', 'n', 'x')), true);
    assert.deepEqual(readdirSync(root), ['out']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an empty --state-dir is exit 2 naming the flag, in every command that takes it (KUBEMIX_STATE_DIR set or not)', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'kubemix-empty-state-'));
  try {
    for (const env of [{}, { KUBEMIX_STATE_DIR: join(cwd, 'from-env') }]) {
      for (const argv of [
        ['status', 'k8s-libvirt-1-1-1'],
        ['kubeconfig', 'k8s-libvirt-1-1-1'],
        ['logs'],
        ['up', 'k8s-libvirt-1-1-1'],
        ['down', '--yes', 'k8s-libvirt-1-1-1'],
        ['add-node', 'k8s-libvirt-1-1-1'],
      ]) {
        const r = await runCli([...argv, '--state-dir', ''], { cwd, env });
        assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /--state-dir is empty/, argv.join(' '));
        assert.ok(!hasStackTrace(r.stderr));
      }
    }
    assert.deepEqual(readdirSync(cwd), [], 'nothing written anywhere');
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
