// Layer 1's pure side: which probes a mixed 1-1-1 cluster gets (golden), its
// Windows probe scripts against a real PowerShell grammar and our rules, its
// Linux ones through dash -n and shellcheck, and how outputs are judged.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { linuxCredentials } from '../src/verify/underlay/credential-scripts.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { planUnderlay, underlayInput, type Probe } from '../src/verify/underlay/plan.js';
import { judgeProbe, judgeUdp } from '../src/verify/underlay/judge.js';
import { matrixText, summarize } from '../src/verify/report.js';
import { checkId, type CheckResult } from '../src/verify/types.js';
import { assertGolden } from './helpers/golden.js';
import { lintPowerShell, parseErrors } from './windows/powershell.js';

const model = resolveModel(
  readSpec({ kind: 'kubeinit', spec: 'k8s-libvirt-1-1-1', nodes: '[[when_group=compute_nodes,os=windows]]' }),
);

function listing(probes: readonly Probe[]): string {
  return probes.map((p) => `${p.id}${p.needs === undefined ? '' : ` (after ${p.needs})`}\n  ${p.command}`).join('\n');
}

const ok = { code: 0, timedOut: false, stderr: '' };

describe('underlay plan', () => {
  it('probes every pair, the API endpoint and the planned names of a mixed 1-1-1 cluster (golden)', () => {
    const before = planUnderlay(underlayInput(model, false));
    const after = planUnderlay(underlayInput(model, true));
    const text = [
      '# before install',
      listing(before.probes),
      '# UDP groups',
      ...before.udp.map((g) => `${g.target.name} listens: ${g.listener.command}\n${listing(g.senders)}`),
      '# skipped before install',
      ...before.skipped.map((s) => `${s.id}: ${s.detail}`),
      '# after install: skipped',
      ...after.skipped.map((s) => `${s.id}: ${s.detail}`),
      '# after install: port probes',
      listing(after.probes.filter((p) => p.expect.kind === 'tcp')),
      '',
    ].join('\n');
    assertGolden('verify/underlay-1-1-1.txt', text);
    assert.ok(after.skipped.length > 0 && after.skipped.every((r) => r.probe === 'udp-4789'));
    assert.ok(
      before.probes.some((p) => p.shell === 'powershell'),
      'the Windows node probes in PowerShell',
    );
  });

  it('leaves out what --only/--skip refuse, and the prerequisite of a kept MTU probe', () => {
    const only = planUnderlay(underlayInput(model, false), (id) => id.includes('/mtu-'));
    assert.ok(only.probes.length > 0 && only.probes.every((p) => p.probe.startsWith('mtu-') && p.needs === undefined));
    assert.equal(only.udp.length, 0);
    assert.equal(only.skipped.length, 0);
  });

  it('Windows probe scripts parse with tree-sitter-powershell and pass our PowerShell rules', () => {
    const plans = [
      planUnderlay(underlayInput(model, false)),
      planUnderlay({ ...underlayInput(model, true), hostGw: true }),
    ];
    const scripts = plans.flatMap((p) => [
      ...p.probes.filter((x) => x.shell === 'powershell').map((x) => x.script),
      ...p.udp.flatMap((g) => [
        ...(g.listener.shell === 'powershell' ? [g.listener.script] : []),
        ...g.senders.filter((x) => x.shell === 'powershell').map((x) => x.script),
      ]),
    ]);
    const kinds = new Set(
      plans.flatMap((p) => p.probes.filter((x) => x.shell === 'powershell').map((x) => x.expect.kind)),
    );
    assert.deepEqual([...kinds].sort(), ['clock', 'credentials', 'dns', 'l2', 'mtu', 'ping', 'tcp']);
    assert.ok(scripts.length > 10);
    for (const s of scripts) {
      assert.deepEqual(parseErrors(s), [], s);
      assert.deepEqual(lintPowerShell(s), [], s);
    }
  });

  it('Linux probe scripts pass dash -n and shellcheck -s sh', () => {
    const plans = [
      planUnderlay(underlayInput(model, false)),
      planUnderlay({ ...underlayInput(model, true), hostGw: true }),
    ];
    const scripts = plans.flatMap((p) => [
      ...p.probes.filter((x) => x.shell === 'sh'),
      ...p.udp.flatMap((g) => [...(g.listener.shell === 'sh' ? [g.listener] : []), ...g.senders]),
    ]);
    const kinds = new Set(plans.flatMap((p) => p.probes.filter((x) => x.shell === 'sh').map((x) => x.expect.kind)));
    assert.deepEqual([...kinds].sort(), ['clock', 'credentials', 'dns', 'l2', 'mtu', 'ping', 'tcp']);
    for (const { command, script } of scripts.filter((x) => x.shell === 'sh')) {
      const parsed = spawnSync('dash', ['-n'], { input: script, encoding: 'utf8' });
      assert.equal(parsed.status, 0, `${command}: ${parsed.stderr}`);
      const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], { input: script, encoding: 'utf8' });
      assert.equal(lint.status, 0, `${command}:\n${lint.stdout}`);
    }
  });
});

describe('underlay judging', () => {
  const plan = planUnderlay(underlayInput(model, false));
  const find = (kind: string): Probe => plan.probes.find((p) => p.expect.kind === kind)!;

  it('a clock within the bound passes; one apart by more than bound + round trip fails with the cause', () => {
    const p = find('clock');
    const at = 1_700_000_000_000;
    const r = (remote: number) =>
      judgeProbe(p, { ...ok, stdout: `KUBEMIX-PROBE clock ${remote}\n`, sentAtMs: at, receivedAtMs: at + 400 });
    assert.equal(r(at + 200 + 2_100).status, 'pass', '2.1 s apart with ±0.2 s uncertainty is within 2 s');
    const bad = r(at + 200 + 2_300);
    assert.equal(bad.status, 'fail');
    assert.match(bad.detail, /\+2\.3 s ±0\.2 s/);
    assert.match(bad.cause ?? '', /not synchronised/);
    assert.equal(r(at - 5_000).status, 'fail');
  });

  it('a missing tool, a probe that never ran and a timeout each fail with what happened', () => {
    const p = find('ping');
    assert.match(judgeProbe(p, { ...ok, stdout: 'KUBEMIX-PROBE missing ping\n' }).detail, /ping is not installed on /);
    assert.match(judgeProbe(p, { ...ok, code: 127, stdout: '' }).detail, /did not run \(exit 127\)/);
    assert.equal(judgeProbe(p, { ...ok, code: 124, timedOut: true, stdout: '' }).detail, 'timed out');
  });

  it('DNS: exact planned addresses pass, extra or other addresses fail', () => {
    const p = find('dns');
    if (p.expect.kind !== 'dns') throw new Error('not dns');
    const want = p.expect.addresses.join(' ');
    assert.equal(judgeProbe(p, { ...ok, stdout: `KUBEMIX-PROBE addresses ${want} \n` }).status, 'pass');
    assert.equal(judgeProbe(p, { ...ok, stdout: `KUBEMIX-PROBE addresses ${want} 10.9.9.9\n` }).status, 'fail');
  });

  it('UDP: a rejected send names ICMP port unreachable; a bound port names the holder', () => {
    const s = plan.udp[0]!.senders[0]!;
    const listened = { ...ok, stdout: 'KUBEMIX-PROBE listening\nKUBEMIX-PROBE done\n' };
    const refused = judgeUdp(s, listened, { ...ok, stdout: 'KUBEMIX-PROBE send-failed Connection refused\n' });
    assert.match(refused.cause ?? '', /rejected on the path/);
    const bound = judgeUdp(
      s,
      { ...ok, stdout: 'KUBEMIX-PROBE bind-failed Address already in use\n' },
      { ...ok, stdout: '' },
    );
    assert.match(bound.detail, /could not bind UDP 4789: Address already in use/);
    const got = judgeUdp(
      s,
      { ...ok, stdout: `KUBEMIX-PROBE listening\nKUBEMIX-PROBE got kubemix-verify:${s.source.name} 10.0.0.1\n` },
      { ...ok, stdout: 'KUBEMIX-PROBE sent\n' },
    );
    assert.equal(got.status, 'pass');
  });
});

describe('credentials probe', () => {
  const installed = planUnderlay(underlayInput(model, true));
  const probes = installed.probes.filter((p) => p.expect.kind === 'credentials');
  const line = (kind: string, name: string, lifetime: number, remaining: number): string =>
    `KUBEMIX-PROBE credential ${kind} ${name} ${lifetime} ${remaining}\n`;
  const judge = (stdout: string): CheckResult => judgeProbe(probes[0]!, { ...ok, stdout });
  const DAY = 86_400;

  it('runs once installed, on every Kubernetes node (not the services node, not before install)', () => {
    const nodes = model.nodes.filter((n) => n.role !== 'services').map((n) => n.name);
    assert.deepEqual(probes.map((p) => p.source.name).sort(), [...nodes].sort());
    assert.ok(probes.some((p) => p.shell === 'powershell'));
    assert.ok(!planUnderlay(underlayInput(model, false)).probes.some((p) => p.expect.kind === 'credentials'));
  });

  it('renewed credentials pass, naming the first to expire', () => {
    const r = judge(
      line('pod-token', 'kube-system/coredns-x/kube-api-access-abc', 3607, 3000) +
        line('kubelet-client', 'kubelet-client-current.pem', 365 * DAY, 300 * DAY) +
        'KUBEMIX-PROBE credentials 2\n',
    );
    assert.equal(r.status, 'pass');
    assert.match(r.detail, /2 credentials; the first to expire: kube-system\/coredns-x\/kube-api-access-abc in 50 min/);
  });

  it('one in its last tenth (at most 30 days) warns with who renews it; verify still passes', () => {
    const r = judge(line('kubelet-client', 'kubelet-client-current.pem', 365 * DAY, 10 * DAY));
    assert.equal(r.status, 'warn');
    assert.match(r.detail, /kubelet-client-current\.pem \(kubelet-client\) expires in 10 days of 365 days/);
    assert.match(r.cause ?? '', /kubectl get csr/);
    assert.equal(judge(line('kubelet-client', 'k.pem', 365 * DAY, 40 * DAY)).status, 'pass', '40 days left: not yet');
    assert.equal(
      judge(line('pod-token', 'ns/p/v', 3600, 300)).status,
      'warn',
      '5 of 60 min: the kubelet did not renew',
    );
    assert.equal(judge(line('legacy-token', 'flanneld-token', 90 * DAY, 80 * DAY)).status, 'warn');
    assert.equal(judge('KUBEMIX-PROBE credential-unread ca.crt openssl-missing\n').status, 'warn');
    const text = matrixText([{ ...r, layer: 'underlay' }]);
    assert.match(text, /^warnings:$/m);
    assert.match(text, /^! underlay credentials .*expires in 10 days/m);
    assert.match(text, /to do: the kubelet rotates its client certificate/);
    assert.doesNotMatch(text, /^failures:$/m);
    assert.deepEqual(summarize([r]), { passed: 0, failed: 0, skipped: 0, warned: 1 });
  });

  it('an expired one fails, naming it and how long ago', () => {
    const r = judge(
      line('kubeadm-cert', 'apiserver.crt', 365 * DAY, -2 * DAY) + line('pod-token', 'a/b/c', 3600, 3000),
    );
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /expired: apiserver\.crt \(kubeadm-cert, 2 days ago\)/);
    assert.match(r.cause ?? '', /kubeadm certs renew all/);
    const id = checkId('underlay', 'credentials', 'x', 'expiry');
    assert.equal(summarize([{ ...r, id }]).failed, 1);
  });

  it('the Linux script reads a real certificate and token (paths moved under a temporary root), never printing the token', () => {
    const root = mkdtempSync(join(tmpdir(), 'kubemix-cred-'));
    try {
      const at = (p: string): string => join(root, p);
      const vol = 'var/lib/kubelet/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x';
      for (const d of ['var/lib/kubelet/pki', vol, 'var/log/pods/kube-system_coredns-abc_uid1', 'etc/cni/net.d'])
        mkdirSync(at(d), { recursive: true });
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('k.key')].concat([
          '-out',
          at('var/lib/kubelet/pki/kubelet.crt'),
          '-days',
          '10',
          '-subj',
          '/CN=x',
        ]),
        { stdio: 'ignore' },
      );
      const now = Math.floor(Date.now() / 1000);
      const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
      const token = `${b64({ alg: 'RS256' })}.${b64({ aud: ['x'], exp: now - 60, iat: now - 3660 })}.c2ln`;
      writeFileSync(at(`${vol}/token`), token);
      writeFileSync(at('etc/cni/net.d/calico-kubeconfig'), `users:\n- name: calico\n  user:\n    token: "${token}"\n`);
      const script = linuxCredentials(false)
        .script.replaceAll('/var/', `${root}/var/`)
        .replaceAll('/etc/', `${root}/etc/`);
      const stdout = execFileSync('sh', ['-c', script], { encoding: 'utf8' });
      assert.doesNotMatch(stdout, new RegExp(token.split('.')[1]!));
      const r = judgeProbe(
        probes.find((p) => p.shell === 'sh')!,
        { ...ok, stdout },
      );
      assert.equal(r.status, 'fail');
      assert.match(r.detail, /kube-system\/coredns-abc\/kube-api-access-x \(pod-token, 1 min ago\)/);
      assert.match(r.detail, /calico-kubeconfig \(cni-token, 1 min ago\)/);
      assert.match(stdout, /^KUBEMIX-PROBE credential kubelet-serving kubelet\.crt 864000 86(3\d\d\d|4000)$/m);
      assert.match(stdout, /^KUBEMIX-PROBE credentials 3$/m);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
