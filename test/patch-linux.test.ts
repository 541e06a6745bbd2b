// kubemix patch --linux, for real on an sshd test host: the plan's own patch
// query and linux-updates scripts (taken from the plan of a bundled example)
// run through the executor over SSH against a private apt world the test
// makes — a local file repository with a newer version of a package and of
// kubelet/kubeadm/kubectl, and a dpkg database under a temporary root
// (APT_CONFIG, set for the test host's sessions by its sshd's SetEnv; dpkg
// --root), so the machine's own packages are never touched. What runs for
// real: the pending listing (held packages never listed), the hold, the
// upgrade through apt-get and dpkg, and the check that then passes. Not here:
// the reboot (it would reboot this machine: the test refuses to run when
// /var/run/reboot-required exists) and the dnf scripts (no dnf here).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { applyPlan } from '../src/exec/apply-plan.js';
import type { ExecEvent } from '../src/exec/events.js';
import { resolveModel } from '../src/model/resolve.js';
import { linuxDistro } from '../src/matrix/index.js';
import { assemblePatchPlan } from '../src/plan/patch/assemble.js';
import { assemblePatchQueryPlan, parsePending, PATCH_QUERY_TASK } from '../src/plan/patch/query.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import { buildPlan } from './harness/plan-builder.js';
import { TestNet, harnessAvailable, type TestHost } from './harness/netns.js';

const missing = ['dpkg-deb', 'apt-get'].filter((t) => {
  try {
    execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});
const skip =
  harnessAvailable() ??
  (missing.length > 0 ? `needs ${missing.join(', ')}` : undefined) ??
  (existsSync('/var/run/reboot-required') ? 'this machine waits for a reboot: the apply would reboot it' : undefined);

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A package that installs one file under /usr/share/doc (inside the private root only). */
function deb(root: string, name: string, version: string, into: string): void {
  const d = join(root, 'build', `${name}-${version}`);
  mkdirSync(join(d, 'DEBIAN'), { recursive: true });
  mkdirSync(join(d, 'usr', 'share', 'doc', name), { recursive: true });
  writeFileSync(join(d, 'usr', 'share', 'doc', name, 'version'), `${version}\n`);
  writeFileSync(
    join(d, 'DEBIAN', 'control'),
    `Package: ${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: kubemix test <t@example.invalid>\nDescription: kubemix patch test package\n`,
  );
  run('dpkg-deb', ['--build', d, join(root, into, `${name}_${version}_all.deb`)]);
}

/** The repository index stanza apt reads for one package file (what dpkg-scanpackages would write). */
function indexEntry(repo: string, name: string, version: string): string {
  const file = `${name}_${version}_all.deb`;
  const body = readFileSync(join(repo, file));
  const control = run('dpkg-deb', ['-f', join(repo, file)]).trimEnd();
  return `${control}\nFilename: ./${file}\nSize: ${body.length}\nSHA256: ${createHash('sha256').update(body).digest('hex')}\n`;
}

/** A local repository with version 2.0 of each package, 1.0 installed under a private dpkg root. */
function aptWorld(dir: string): { conf: string; dpkgRoot: string } {
  const names = ['kubemix-demo', 'kubeadm', 'kubectl', 'kubelet'];
  for (const d of ['old', 'repo', 'root/var/lib/dpkg/info', 'root/var/lib/dpkg/updates', 'root/var/lib/dpkg/triggers'])
    mkdirSync(join(dir, d), { recursive: true });
  for (const d of ['state/lists/partial', 'cache/archives/partial', 'sources.list.d', 'preferences.d', 'conf.d', 'log'])
    mkdirSync(join(dir, 'apt', d), { recursive: true });
  writeFileSync(join(dir, 'root/var/lib/dpkg/status'), '');
  for (const n of names) {
    deb(dir, n, '1.0', 'old');
    deb(dir, n, '2.0', 'repo');
  }
  writeFileSync(join(dir, 'repo', 'Packages'), names.map((n) => indexEntry(join(dir, 'repo'), n, '2.0')).join('\n'));
  const dpkgRoot = join(dir, 'root');
  run('dpkg', [`--root=${dpkgRoot}`, '-i', ...names.map((n) => join(dir, 'old', `${n}_1.0_all.deb`))]);
  writeFileSync(join(dir, 'apt', 'sources.list'), `deb [trusted=yes] file:${dir}/repo ./\n`);
  const conf = join(dir, 'apt.conf');
  writeFileSync(
    conf,
    [
      `Dir::State "${dir}/apt/state";`,
      `Dir::State::status "${dpkgRoot}/var/lib/dpkg/status";`,
      `Dir::Cache "${dir}/apt/cache";`,
      `Dir::Etc::sourcelist "${dir}/apt/sources.list";`,
      `Dir::Etc::sourceparts "${dir}/apt/sources.list.d";`,
      `Dir::Etc::preferencesparts "${dir}/apt/preferences.d";`,
      `Dir::Etc::parts "${dir}/apt/conf.d";`,
      `Dir::Log "${dir}/apt/log";`,
      'APT::Sandbox::User "root";',
      `DPkg::Options { "--root=${dpkgRoot}"; };`,
      '',
    ].join('\n'),
  );
  return { conf, dpkgRoot };
}

/** `name version selection` of each package in the private dpkg database. */
function installed(dpkgRoot: string): string[] {
  return run('dpkg-query', [`--admindir=${dpkgRoot}/var/lib/dpkg`, '-W', '-f', '${Package} ${Version} ${Status}\n'])
    .trim()
    .split('\n')
    .map((l) => l.split(' ').slice(0, 3).join(' '))
    .sort();
}

describe('patch --linux on a Debian test host, for real', { skip, timeout: 240_000 }, () => {
  let net: TestNet;
  let host: TestHost;
  let world: { conf: string; dpkgRoot: string };
  const text = readFileSync(repoPath('examples', 'k8s-libvirt-3-2-1.yaml'), 'utf8');
  const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }));
  const worker = model.nodes.find((n) => n.role === 'worker' && n.osFamily === 'linux');
  const selection = { kbs: [], securityOnly: false };

  before(async () => {
    net = await TestNet.create(1, { privateHosts: true });
    host = net.hosts[0] as TestHost;
    world = aptWorld(join(net.root, 'aptworld'));
    writeFileSync(host.configFile, `${readFileSync(host.configFile, 'utf8')}SetEnv APT_CONFIG=${world.conf}\n`);
    await net.stopSshd(host);
    await net.startSshd(host);
  });
  after(async () => net?.cleanup());

  /** The plan's task `name` for the worker, run on the test host; returns its stdout lines. */
  async function runPlanTask(source: 'query' | 'roll', name: string): Promise<string[]> {
    assert.ok(worker !== undefined);
    assert.equal(linuxDistro(worker.os)?.family, 'apt');
    const plan =
      source === 'query'
        ? assemblePatchQueryPlan(model, [worker], selection).plan
        : assemblePatchPlan(model, { ...selection, linux: true, nodes: [worker.name], maxUnavailable: 1 }).plan;
    const t = plan.tasks.find((x) => x.host === worker.name && x.name === name) ?? assert.fail(`no ${name}`);
    const built = buildPlan(
      [net.connection(host)],
      [
        {
          host: host.name,
          name,
          apply: t.apply.script,
          check: t.check?.script ?? null,
          timeoutSeconds: 120,
          ...(t.reboots === undefined ? {} : { reboots: t.reboots }),
        },
      ],
    );
    const lines: string[] = [];
    await applyPlan(built.plan, built.contents, {
      stateDir: join(net.root, `state-${name}-${Date.now()}`),
      trustNewHosts: true,
      retry: { attempts: 1 },
      signal: new AbortController().signal,
      listeners: [(e: ExecEvent) => void (e.type === 'task:output' && e.stream === 'stdout' && lines.push(e.line))],
    });
    return lines;
  }

  it('the query lists the pending package, never the Kubernetes ones; the roll holds them and upgrades the rest', async () => {
    const before = parsePending(await runPlanTask('query', PATCH_QUERY_TASK));
    assert.deepEqual(before, { updates: [{ id: 'kubemix-demo', title: '1.0 -> 2.0' }], rebootRequired: false });
    await runPlanTask('roll', 'linux-updates');
    assert.deepEqual(installed(world.dpkgRoot), [
      'kubeadm 1.0 hold',
      'kubectl 1.0 hold',
      'kubelet 1.0 hold',
      'kubemix-demo 2.0 install',
    ]);
    assert.deepEqual(parsePending(await runPlanTask('query', PATCH_QUERY_TASK)), {
      updates: [],
      rebootRequired: false,
    });
    // The machine's own dpkg database never heard of the test package.
    assert.throws(() => run('dpkg-query', ['-W', 'kubemix-demo']));
  });
});
