// e2e tier: `kubemix verify` (layer 1, the underlay), `kubemix diagnose` and
// `kubemix patch --linux` (the query, and the roll's own update step)
// against two real Debian 12 VMs (qemu, software emulation) of an
// `existing`-driver spec: a control plane and a worker, no services node (the
// underlay plan probes node pairs, the API name and the clock; without a
// services node the API endpoint is cp1 and no registry name is checked).
// Runs under `npm run test:e2e` only (KUBEMIX_E2E=1).
//
// Nothing is installed on the VMs first: verify runs as before a deploy (TCP
// 6443/10250 skipped, UDP 4789 probed with a listener on each target). The API
// name is not served by any DNS here, so the test first sees the DNS cells
// fail, then writes the name into each VM's /etc/hosts — the line kubemix's
// host-prep `etc-hosts` task writes, which this test does not run.
//
// patch: the VMs have no route to a mirror, so the test makes a local apt
// repository (dpkg-deb) on w1 holding a newer version of a test package and of
// kubelet, both installed at 1.0. The cordon, drain, Ready and uncordon steps
// need kubectl against an API server, which these VMs do not run: the roll's
// host step (`linux-updates`, the plan's own task) runs through the executor.
// qemu runs the VMs with -no-reboot, so the test package asks for no reboot.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { applyPlan } from '../../src/exec/apply-plan.js';
import type { ExecEvent } from '../../src/exec/events.js';
import { resolveModel } from '../../src/model/resolve.js';
import { assemblePatchPlan } from '../../src/plan/patch/assemble.js';
import { readSpec } from '../../src/spec/read.js';
import { buildPlan } from '../harness/plan-builder.js';
import { fakeSecret, seedSecrets } from '../trace/fake-secrets.js';
import { buildDeb, packagesIndex, writeRemote } from './apt-repo.js';
import { kubemix, output, type KubemixRun } from './kubemix.js';
import { VmNet, vmsAvailable, type Vm } from './vm.js';
import { existingVmHost, writeExistingVmSpec } from '../helpers/existing-vm-spec.js';

const skip =
  process.env['KUBEMIX_E2E'] === '1' ? vmsAvailable() : 'the VM tier runs with npm run test:e2e (KUBEMIX_E2E=1)';
const log = (line: string): void => void process.stderr.write(`# e2e: ${line}\n`);
const CLUSTER = 'lab';
const DOMAIN = 'e2e.internal';
const API_NAME = `api.${CLUSTER}.${DOMAIN}`;
/** flannel's VXLAN settings kubemix plans for a cluster that may hold Windows nodes (Windows needs these). */
const VNI = 4096;
const PORT = 4789;
/** A bootstrap token shape (kubeadm: [a-z0-9]{6}.[a-z0-9]{16}) and a PEM key: what redaction must catch by shape. */
const TOKEN = 'kmtest.0123456789abcdef';
const PEM_BODY = 'MC4CAQAwBQYDK2VwBCIEIKmTestPrivateKeyMaterialNotRealAAAAAAAAAA';

interface Check {
  readonly id: string;
  readonly status: 'pass' | 'fail' | 'skip';
  readonly detail: string;
  readonly cause?: string;
}
interface Report {
  readonly ok: boolean;
  readonly summary: { passed: number; failed: number; skipped: number };
  readonly checks: readonly Check[];
}

const report = (run: KubemixRun): Report => JSON.parse(run.stdout) as Report;
const ids = (r: Report, status: Check['status']): string[] =>
  r.checks
    .filter((c) => c.status === status)
    .map((c) => c.id)
    .sort();

describe('kubemix verify and diagnose on real VMs', { skip, timeout: 30 * 60_000 }, () => {
  const started = Date.now();
  let net: VmNet;
  let cp1: Vm;
  let w1: Vm;
  let specFile: string;
  let stateDir: string;
  const flags = (): string[] => ['--known-hosts', net.knownHosts];
  const verify = async (...extra: string[]): Promise<KubemixRun> => {
    const run = await kubemix(['verify', specFile, ...flags(), ...extra]);
    log(`verify ${extra.join(' ')}: exit ${run.code}, ${run.seconds.toFixed(1)} s`);
    return run;
  };

  before(async () => {
    net = VmNet.create({ log });
    cp1 = net.define({ name: 'cp1', cpus: 2, memoryMiB: 1024 });
    w1 = net.define({ name: 'w1', cpus: 1, memoryMiB: 1024 });
    specFile = join(net.root, 'cluster.yaml');
    stateDir = join(net.root, '.kubemix', CLUSTER);
    writeExistingVmSpec(specFile, {
      cluster: CLUSTER,
      domain: DOMAIN,
      net,
      hosts: [existingVmHost(cp1, ['control-plane'], net.clientKey), existingVmHost(w1, ['worker'], net.clientKey)],
    });
    // One VM booting at a time: the machine's two cores are shared.
    await net.start([cp1]);
    await net.start([w1]);
  });
  after(() => {
    net?.cleanup();
    log(`verify-diagnose wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it('verify before the API name resolves: exactly the DNS cells fail, exit 1', async () => {
    const run = await verify('--json', '--only', '/dns/');
    assert.equal(run.code, 1, output(run));
    const r = report(run);
    assert.deepEqual(ids(r, 'fail'), [`underlay/dns/cp1/${API_NAME}`, `underlay/dns/w1/${API_NAME}`], output(run));
    assert.equal(r.summary.passed, 0);
  });

  it('verify: every underlay cell that runs before install passes; exit 0', async () => {
    for (const vm of [cp1, w1]) net.ssh(vm, `printf '%s %s\\n' ${cp1.address} ${API_NAME} >> /etc/hosts`);
    const run = await verify('--json');
    assert.equal(run.code, 0, output(run));
    const r = report(run);
    const pairs = ['cp1/w1', 'w1/cp1'];
    assert.deepEqual(
      ids(r, 'pass'),
      [
        `underlay/clock/cp1/deployer`,
        `underlay/clock/w1/deployer`,
        `underlay/dns/cp1/${API_NAME}`,
        `underlay/dns/w1/${API_NAME}`,
        ...pairs.map((p) => `underlay/mtu-1500/${p}`),
        ...pairs.map((p) => `underlay/ping/${p}`),
        ...pairs.map((p) => `underlay/udp-${PORT}/${p}`),
      ].sort(),
      output(run),
    );
    // Before install nothing listens on 6443/10250: those cells are skipped, with the reason.
    assert.deepEqual(
      ids(r, 'skip'),
      [
        'underlay/tcp-10250/cp1/w1',
        'underlay/tcp-10250/w1/cp1',
        'underlay/tcp-6443/cp1/cp1',
        'underlay/tcp-6443/w1/cp1',
      ],
      output(run),
    );
    assert.deepEqual(r.summary, { passed: 10, failed: 0, skipped: 4 });
    const text = await verify();
    assert.equal(text.code, 0, output(text));
    assert.match(text.stdout, /10 checks passed, 0 failed, 4 skipped/);
    log(`healthy matrix:\n${text.stdout}`);
  });

  it('verify with UDP 4789 dropped into w1 by nftables: exactly cp1 → w1 fails, named; exit 1', async () => {
    net.ssh(
      w1,
      `nft add table inet kmtest && nft add chain inet kmtest in '{ type filter hook input priority 0; }' && nft add rule inet kmtest in udp dport ${PORT} drop`,
    );
    try {
      const run = await verify('--json');
      assert.equal(run.code, 1, output(run));
      const r = report(run);
      assert.deepEqual(ids(r, 'fail'), [`underlay/udp-${PORT}/cp1/w1`], output(run));
      assert.deepEqual(r.summary, { passed: 9, failed: 1, skipped: 4 });
      const failed = r.checks.find((c) => c.status === 'fail');
      assert.match(failed?.detail ?? '', /no datagram arrived at w1/);
      assert.match(failed?.cause ?? '', /firewall drops UDP 4789/);
      const text = await verify();
      assert.equal(text.code, 1, output(text));
      assert.match(text.stdout, /✗ underlay udp-4789 cp1 → w1/);
      log(`matrix with UDP ${PORT} dropped into w1:\n${text.stdout}`);
    } finally {
      net.ssh(w1, 'nft delete table inet kmtest');
    }
  });

  it('diagnose --out X.tar.gz --json: every node, 0600, no secret; a wrong VNI/port on w1 is named', async () => {
    // A secret of the state directory's store, a bootstrap token and a private key, where diagnose collects.
    const secret = fakeSecret('registry-password');
    await seedSecrets(stateDir, ['registry-password'], new Set());
    for (const vm of [cp1, w1])
      net.ssh(
        vm,
        [
          `printf '# left by an operator: %s\\n' '${secret}' >> /etc/resolv.conf`,
          'mkdir -p /etc/cni/net.d',
          `printf '# kubeadm join api:6443 --token %s\\n-----BEGIN PRIVATE KEY-----\\n%s\\n-----END PRIVATE KEY-----\\n' '${TOKEN}' '${PEM_BODY}' > /etc/cni/net.d/99-left-behind.conf`,
        ].join(' && '),
      );
    // flannel's link as the cluster plans it on cp1; on w1 with flannel's and the kernel's defaults (VNI 1, port 8472).
    net.ssh(cp1, `ip link add flannel.${VNI} type vxlan id ${VNI} dstport ${PORT} dev eth0 nolearning`);
    net.ssh(w1, `ip link add flannel.${VNI} type vxlan id 1 dstport 8472 dev eth0 nolearning`);

    const archive = join(net.root, 'diag.tar.gz');
    const run = await kubemix(['diagnose', specFile, ...flags(), '--json', '--out', archive]);
    log(`diagnose: exit ${run.code}, ${run.seconds.toFixed(1)} s`);
    // Findings matched (nothing is installed, so kubelet and containerd are down too): exit 1, no node unreachable.
    assert.equal(run.code, 1, output(run));
    const doc = JSON.parse(run.stdout) as {
      bundle: string;
      failed: string[];
      findings: { id: string; node: string; evidence: string; cause: string }[];
    };
    assert.equal(doc.bundle, archive);
    assert.deepEqual(doc.failed, []);
    const vxlan = doc.findings.filter((f) => f.id === 'vxlan-mismatch');
    assert.deepEqual(
      vxlan.map((f) => [f.node, f.evidence]),
      [['w1', 'ip -d link: VNI 1, port 8472']],
      run.stdout,
    );
    assert.match(vxlan[0]?.cause ?? '', /VNI 4096, port 4789/);
    log(`findings: ${doc.findings.map((f) => `${f.id} ${f.node}`).join('; ')}`);

    assert.equal(statSync(archive).mode & 0o777, 0o600);
    const listing = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const node of ['cp1', 'w1'])
      for (const section of ['services', 'addresses', 'routes', 'vxlan-link', 'bridge-fdb', 'dns', 'cni-config'])
        assert.ok(
          listing.some((l) => l.endsWith(`/${node}/${section}.txt`)),
          `${node}/${section}.txt missing:\n${listing.join('\n')}`,
        );
    const out = join(net.root, 'extracted');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archive, '-C', out]);
    const top = join(out, readdirSync(out)[0] ?? '');
    assert.deepEqual(readdirSync(top).sort(), ['cp1', 'findings.json', 'findings.txt', 'w1']);
    const everything = execFileSync('sh', ['-c', 'cat "$1"/*/* "$1"/*.json "$1"/*.txt', 'sh', top], {
      encoding: 'utf8',
    });
    // The planted material reached the nodes' collected sections, and was redacted there.
    assert.match(readFileSync(join(top, 'w1', 'dns.txt'), 'utf8'), /# left by an operator: /);
    assert.match(readFileSync(join(top, 'w1', 'vxlan-link.txt'), 'utf8'), /vxlan id 1 .*dstport 8472/s);
    for (const leaked of [secret, TOKEN, PEM_BODY])
      assert.ok(!everything.includes(leaked), `${leaked.slice(0, 12)}… reached the archive`);
    // The executor's own logs of the collection (they held the raw output) are gone.
    assert.throws(() => statSync(join(stateDir, 'diagnose', 'logs')));
  });

  it('patch --linux: the query names the pending package, the update step installs it and keeps kubelet held', async () => {
    const work = join(net.root, 'apt');
    const tool = 'kubemix-e2e-tool';
    const old = [tool, 'kubelet'].map((name) => buildDeb(work, { name, version: '1.0' }, join(work, 'old')));
    const fresh = [tool, 'kubelet'].map((name) => buildDeb(work, { name, version: '1.1' }, join(work, 'repo')));
    // w1's only package source is the test's repository (the image's mirror is out of reach).
    net.ssh(
      w1,
      [
        'mkdir -p /srv/kmrepo /root/kmold /root/apt-sources',
        'mv /etc/apt/sources.list /etc/apt/sources.list.d/* /root/apt-sources/ 2>/dev/null || true',
        ...[...old, ...fresh].map((f) =>
          writeRemote(
            `${f.includes('/old/') ? '/root/kmold' : '/srv/kmrepo'}/${f.split('/').pop() ?? ''}`,
            readFileSync(f),
          ),
        ),
        writeRemote('/srv/kmrepo/Packages', packagesIndex(fresh)),
        "echo 'deb [trusted=yes] file:/srv/kmrepo ./' > /etc/apt/sources.list.d/kmrepo.list",
        'dpkg -i /root/kmold/*.deb >/dev/null',
      ].join(' && '),
    );
    const check = async (): Promise<{ code: number | null; pending: Record<string, unknown> }> => {
      const run = await kubemix(['patch', specFile, ...flags(), '--linux', '--nodes', 'w1', '--check', '--json']);
      log(`patch --check: exit ${run.code}, ${run.seconds.toFixed(1)} s`);
      return { code: run.code, pending: (JSON.parse(run.stdout) as { pending: Record<string, unknown> }).pending };
    };
    const before = await check();
    assert.equal(before.code, 1);
    assert.deepEqual(before.pending, { w1: { updates: [{ id: tool, title: '1.0 -> 1.1' }], rebootRequired: false } });

    // The roll's host step for w1, the plan's own script, through the executor over SSH.
    const model = resolveModel(readSpec({ kind: 'file', path: specFile, text: readFileSync(specFile, 'utf8') }));
    const roll = assemblePatchPlan(model, {
      kbs: [],
      securityOnly: false,
      linux: true,
      nodes: ['w1'],
      maxUnavailable: 1,
    });
    const t = roll.plan.tasks.find((x) => x.host === 'w1' && x.name === 'linux-updates') ?? assert.fail();
    const connection = { name: 'w1', address: w1.address, port: 22, user: 'root', identityFile: net.clientKey };
    const built = buildPlan(
      [{ ...connection, shell: 'sh', provisioner: 'user' }],
      [
        {
          host: 'w1',
          name: t.name,
          apply: t.apply.script,
          check: t.check?.script ?? null,
          timeoutSeconds: 600,
          reboots: true,
        },
      ],
    );
    const lines: string[] = [];
    const started = Date.now();
    await applyPlan(built.plan, built.contents, {
      stateDir: join(net.root, 'patch-state'),
      knownHostsFile: net.knownHosts,
      retry: { attempts: 1 },
      signal: new AbortController().signal,
      listeners: [(e: ExecEvent) => void (e.type === 'task:output' && lines.push(e.line))],
    });
    log(`linux-updates on w1: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const installed = net
      .ssh(w1, `dpkg-query -W -f '\${Package} \${Version} \${db:Status-Want}\n' ${tool} kubelet`)
      .trim()
      .split('\n')
      .sort();
    assert.deepEqual(installed, ['kubelet 1.0 hold', `${tool} 1.1 install`], lines.join('\n'));
    const after = await check();
    assert.equal(after.code, 0);
    assert.deepEqual(after.pending, { w1: { updates: [], rebootRequired: false } });
  });
});
