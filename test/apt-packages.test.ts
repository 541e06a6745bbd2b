// Every program the test suite starts on this machine comes from a Debian
// package that scripts/apt-packages.txt lists, that a listed package depends
// on, or that every Debian has (Essential: yes or Priority: required, what a
// minbase debootstrap installs). A program missing from the list passes on a
// machine with leftovers and fails on a fresh one: this test names it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dependencyClosure,
  listedPackages,
  readPackageDb,
  resolvePrograms,
  type PackageDb,
  type Resolved,
} from './helpers/debian-packages.js';
import { repoPath } from './helpers/cli.js';
import { scanSpawnedPrograms, type ProgramUse } from './helpers/spawned-programs.js';

/**
 * Programs a tool or a script starts on the tests' behalf, which no spawn call
 * names. Each entry says who starts it; they are checked like the scanned ones.
 */
const INDIRECT: readonly ProgramUse[] = [
  // libvirtd runs qemu-img to create a volume whose format is not raw
  // (`virsh vol-create-as … --format qcow2`, test/cleanup-hypervisors.test.ts).
  { program: 'qemu-img', where: 'libvirtd: qcow2 volumes (test/cleanup-hypervisors.test.ts)' },
  // libvirtd probes the emulator's capabilities when a qemu domain is defined, and
  // starts virtlogd for the domain's console log.
  { program: 'qemu-system-x86_64', where: 'libvirtd: qemu domain capabilities (test/harness/libvirt.ts)' },
  { program: 'virtlogd', where: 'libvirtd: domain logs (test/harness/libvirt.ts)' },
  // The hypervisor cleanup task's script runs virsh on a test host (same filesystem).
  { program: 'virsh', where: 'task-cleanup-hypervisors script over SSH (test/cleanup-hypervisors.test.ts)' },
  // The test hosts' sshd in its private mount namespace (test/harness/private-etc.ts):
  // unshare, then sh and mount for the bind mounts; sshd runs each session in sh.
  { program: 'mount', where: 'test/harness/private-etc.ts: bind mounts before sshd' },
  { program: 'ssh-keygen', where: 'test/harness/netns.ts: client and host keys' },
  // LocalTransport (src/transport/local.ts) wraps every local task in timeout,
  // under sudo when not root, and writes the script with mktemp and head.
  { program: 'timeout', where: 'src/transport/local.ts' },
  { program: 'sudo', where: 'src/transport/local.ts (as a non-root user)' },
  { program: 'mktemp', where: 'src/transport/local.ts' },
  { program: 'head', where: 'src/transport/local.ts' },
  // Download tasks run on this machine against a loopback server (test/containerd.test.ts):
  // curl, awk for the published sum, sha256sum to check it.
  { program: 'curl', where: 'downloadScript (src/plan/tasks/download.ts) run by test/containerd.test.ts' },
  { program: 'awk', where: 'downloadScript (src/plan/tasks/download.ts) run by test/containerd.test.ts' },
  { program: 'sha256sum', where: 'downloadScript (src/plan/tasks/download.ts) run by test/containerd.test.ts' },
  // Registry TLS and htpasswd tasks run on this machine (test/registry.test.ts).
  { program: 'openssl', where: 'src/plan/tasks/registry-scripts.ts run by test/registry.test.ts' },
  { program: 'htpasswd', where: 'src/plan/tasks/registry-scripts.ts run by test/registry.test.ts' },
  { program: 'install', where: 'src/plan/tasks/registry-scripts.ts run by test/registry.test.ts' },
  { program: 'cmp', where: 'src/plan/tasks/registry-scripts.ts run by test/registry.test.ts' },
  // npm ci (scripts/prepare.sh, before the tests): node-gyp compiles tree-sitter's native
  // binding (the npm package of tree-sitter 0.25.0 has no prebuilt one) with python3, make and g++.
  { program: 'python3', where: 'node-gyp: tree-sitter install script (npm ci)' },
  { program: 'make', where: 'node-gyp: tree-sitter install script (npm ci)' },
  { program: 'g++', where: 'node-gyp: tree-sitter install script (npm ci)' },
  // Headless chromium screenshots the topology (test/topology-browser.test.ts) through playwright-core.
  { program: 'chromium', where: 'playwright-core (test/topology-browser.test.ts)' },
];

/** Not from Debian here: node is installed as README says (Node >= 20) and runs the suite itself. */
const NOT_DEBIAN = new Set(['node', process.execPath]);

const root = repoPath();
const scan = scanSpawnedPrograms(root, ['src', 'test'], (p) =>
  /\/test\/(e2e|golden|fixtures|lint-corpus|lint-fix|spec-corpus|trace\/golden)$/.test(p),
);

const resolved = new Map<string, Resolved>();

function unlisted(uses: readonly ProgramUse[], db: PackageDb, listed: readonly string[]): string[] {
  const covered = dependencyClosure(db, listed);
  const programs = [...new Set(uses.map((u) => u.program))].filter((p) => !NOT_DEBIAN.has(p)).sort();
  const unknown = programs.filter((p) => !resolved.has(p));
  for (const [p, r] of resolvePrograms(unknown)) resolved.set(p, r);
  const problems: string[] = [];
  for (const program of programs) {
    const { path, pkg } = resolved.get(program) ?? {};
    const where = uses
      .filter((u) => u.program === program)
      .map((u) => u.where)
      .slice(0, 3)
      .join(', ');
    if (path === undefined)
      problems.push(`${program} (${where}) is not on PATH: add its Debian package to scripts/apt-packages.txt`);
    else if (pkg === undefined) problems.push(`${program} (${where}) is ${path}, which no Debian package installed`);
    else if (!covered.has(pkg) && db.get(pkg)?.base !== true)
      problems.push(`${program} (${where}) comes from ${pkg}: add ${pkg} to scripts/apt-packages.txt`);
  }
  return problems;
}

describe('Debian packages of the test suite (scripts/apt-packages.txt)', () => {
  const db = readPackageDb();
  const listed = listedPackages(repoPath('scripts', 'apt-packages.txt'));
  // One dpkg -S for every program of the tests below (it reads every package's file list).
  for (const [p, r] of resolvePrograms([...new Set([...scan.uses, ...INDIRECT].map((u) => u.program))]))
    resolved.set(p, r);

  it('the scan finds programs by literal, through the harness wrappers, runners and absolute paths', () => {
    const found = (program: string) => scan.uses.some((u) => u.program === program);
    // haproxy: a local run() wrapper; virsh: sh() imported from test/harness/netns.ts; ps: `ip netns exec NS ps`;
    // named-checkconf: `unshare -r named-checkconf`; libvirtd: setpriv's program; sshd: an absolute path.
    for (const p of [
      'haproxy',
      'virsh',
      'ip',
      'ps',
      'named-checkconf',
      '/usr/sbin/libvirtd',
      '/usr/sbin/sshd',
      'shellcheck',
      'dnsmasq',
    ]) {
      assert.ok(found(p), `${p} not found by the scan`);
    }
  });

  it('every spawn names its program (a literal or a wrapper parameter)', () => {
    // src/transport/local.ts picks sudo or timeout at run time, both in INDIRECT; the sh escaper's
    // property test runs dash and bash (both Essential) from a loop variable. Compared without line numbers.
    assert.deepEqual(
      scan.dynamic.map((d) => `${d.where.replace(/:\d+$/, '')}: ${d.program}`),
      ["src/transport/local.ts: cmd ?? 'timeout'", 'test/escape/sh.test.ts: shell'],
    );
  });

  it('every program the tests spawn comes from a listed package, a dependency of one, or the base system', () => {
    assert.deepEqual(unlisted(scan.uses, db, listed), []);
  });

  it('every program a tool or script starts for the tests (INDIRECT) does too', () => {
    assert.deepEqual(unlisted(INDIRECT, db, listed), []);
  });

  it('without qemu-utils in the list, qemu-img is reported', () => {
    const problems = unlisted(
      INDIRECT,
      db,
      listed.filter((p) => p !== 'qemu-utils'),
    );
    assert.deepEqual(
      problems.map((p) => p.split(' ')[0]),
      ['qemu-img'],
    );
    assert.match(problems[0] ?? '', /add qemu-utils to scripts\/apt-packages\.txt/);
  });
});
