// e2e tier: kubemix deploys the services node and Linux host prep into real
// Debian 12 VMs (qemu, software emulation) of an `existing`-driver spec, then
// adds a worker that gets its address from the services node's DHCP, and
// finally takes it all down. Runs under `npm run test:e2e` only
// (KUBEMIX_E2E=1): it boots VMs and may build the base image.
//
// What stands in for what (and is said so in docs/e2e.md): `openssl s_server`
// on the controller's 6443 stands in for kube-apiserver behind HAProxy; the
// VMs have no route to the internet, and the real containerd, runc and CNI
// releases cannot be had here either: the test makes its own files, pins
// their SHA256 in the spec and seeds the deployer's cache with them
// (`up --downloads DIR`), so the nodes fetch them from the services node's
// download cache. pkgs.k8s.io stays out of reach: that task stops, named.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resolver } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { connect } from 'node:tls';
import { call, digestOf, OCI_MANIFEST, pushImage } from '../helpers/oci-push.js';
import { readJournal } from '../../src/exec/journal.js';
import { resolveModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { SERVICES } from '../../src/matrix/index.js';
import { FILES_PATHS } from '../../src/render/services/files.js';
import { readSpec } from '../../src/spec/read.js';
import { applied, finalStates, kubemix, output, taskEvents } from './kubemix.js';
import { VmNet, vmsAvailable, type Vm } from './vm.js';
import { existingVmHost, writeExistingVmSpec } from '../helpers/existing-vm-spec.js';

const skip =
  process.env['KUBEMIX_E2E'] === '1' ? vmsAvailable() : 'the VM tier runs with npm run test:e2e (KUBEMIX_E2E=1)';
const log = (line: string): void => void process.stderr.write(`# e2e: ${line}\n`);
const CLUSTER = 'lab';
const DOMAIN = 'e2e.internal';
const ZONE = `${CLUSTER}.${DOMAIN}`;
/**
 * cp1's tasks that cannot succeed here: pkgs.k8s.io is out of reach, and the
 * containerd release the test made holds no containerd binary to configure.
 */
const CP1_FAILURES = ['containerd', 'kubernetes-packages'];
/** Files the test makes in place of the node downloads: archives hold one marker file (path inside), runc is bytes. */
const MADE: Readonly<Record<string, string | undefined>> = {
  'linux/containerd.tar.gz': 'bin/kubemix-e2e-containerd',
  'linux/runc': undefined,
  'linux/cni-plugins.tgz': 'kubemix-e2e-cni',
};
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('services node, host prep, add-node and down on real VMs', { skip, timeout: 40 * 60_000 }, () => {
  const started = Date.now();
  let net: VmNet;
  let svc: Vm;
  let cp1: Vm;
  let w1: Vm;
  let specFile: string;
  let stateDir: string;
  const hostEntry = (vm: Vm, roles: string[], extra: Record<string, unknown> = {}) =>
    existingVmHost(vm, roles, net.clientKey, extra);
  /** SHA256 of each made file, pinned in the spec (spec.downloads.<id>.sha256). */
  const pins = new Map<string, string>();
  let seedDir: string;
  const writeSpec = (hosts: unknown[]): void => {
    const downloads = Object.fromEntries([...pins].map(([id, hash]) => [id, { sha256: hash }]));
    writeExistingVmSpec(specFile, { cluster: CLUSTER, domain: DOMAIN, net, hosts, downloads });
  };
  /** The made files under their upstream names in a seed directory; their hashes pinned. */
  const makeDownloads = (): void => {
    const text = readFileSync(specFile, 'utf8');
    const planned = assemblePlan(resolveModel(readSpec({ kind: 'file', path: specFile, text }))).plan.downloads ?? [];
    seedDir = join(net.root, 'seed');
    const work = join(net.root, 'made');
    mkdirSync(seedDir);
    for (const [id, inside] of Object.entries(MADE)) {
      const d = planned.find((x) => x.id === id) ?? assert.fail(`the plan has no download ${id}`);
      const file = join(seedDir, new URL(d.url).pathname.split('/').pop() ?? id);
      const marker = `made by the kubemix e2e test for ${id}\n`;
      if (inside === undefined) writeFileSync(file, marker);
      else {
        mkdirSync(join(work, id, inside, '..'), { recursive: true });
        writeFileSync(join(work, id, inside), marker);
        execFileSync('tar', ['-czf', file, '-C', join(work, id), inside]);
      }
      pins.set(id, sha256(readFileSync(file)));
    }
  };
  const flags = (): string[] => ['--known-hosts', net.knownHosts, '--json'];
  const upFlags = (): string[] => [...flags(), '--downloads', seedDir];
  const secret = (name: string): string =>
    (JSON.parse(readFileSync(join(stateDir, 'secrets.json'), 'utf8')) as Record<string, { value: string }>)[name]
      ?.value ?? '';
  const dig = (...args: string[]): string[] =>
    execFileSync('dig', ['+short', '+time=3', '+tries=2', `@${svc.address}`, ...args], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);

  before(async () => {
    net = VmNet.create({ log });
    svc = net.define({ name: 'svc', cpus: 2, memoryMiB: 1024 });
    cp1 = net.define({ name: 'cp1', cpus: 2, memoryMiB: 2048 });
    w1 = net.define({ name: 'w1', cpus: 1, memoryMiB: 1024, dhcp: true });
    specFile = join(net.root, 'cluster.yaml');
    stateDir = join(net.root, '.kubemix', CLUSTER);
    writeSpec([hostEntry(svc, ['services']), hostEntry(cp1, ['control-plane'])]);
    makeDownloads();
    writeSpec([hostEntry(svc, ['services']), hostEntry(cp1, ['control-plane'])]);
    // One VM booting at a time: the machine's two cores are shared.
    await net.start([svc]);
    await net.start([cp1]);
  });
  after(() => {
    net?.cleanup();
    log(`tier wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it('kill -9 during the first `up`, then resume: nothing completed is applied again', async () => {
    const killAfter = 5 + Math.floor(Math.random() * 5);
    const killed = await kubemix(['up', specFile, ...upFlags(), '--stop-after', 'task-create-services'], {
      killAfterDone: killAfter,
    });
    assert.equal(killed.code, null, `expected a kill after ${killAfter} tasks\n${output(killed)}`);
    // The snapshot (journal.json) plus what the run appended to journal.log before the kill.
    const journal = (await readJournal(stateDir)) ?? assert.fail('no journal after the kill');
    const doneBefore = Object.entries(journal.tasks)
      .filter(([, e]) => e.state === 'done')
      .map(([id]) => id);
    log(
      `killed after ${killAfter} finished tasks (${killed.seconds.toFixed(1)} s); journal: ${doneBefore.length} done`,
    );
    assert.ok(doneBefore.length >= 1, JSON.stringify(journal.tasks));

    const resumed = await kubemix(['up', specFile, ...upFlags(), '--stop-after', 'task-create-services']);
    assert.equal(resumed.code, 0, output(resumed));
    const states = finalStates(resumed);
    for (const id of doneBefore)
      assert.equal(states.get(id), 'skipped', `${id} was done before the kill and ran again`);
    assert.ok(
      [...states.values()].every((s) => s === 'done' || s === 'skipped'),
      JSON.stringify([...states]),
    );
    log(`resumed in ${resumed.seconds.toFixed(1)} s; applied ${applied(resumed).length} task(s)`);
  });

  it('facts of every VM are recorded', () => {
    const dir = join(stateDir, 'facts', 'cp1');
    const facts = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    assert.match(facts, /cpus=2\b/);
    assert.match(facts, /os=debian\nversion=12/);
  });

  it('Bind answers for the API name, *.apps and reverse lookups', () => {
    assert.deepEqual(dig(`api.${ZONE}`), [svc.address]);
    assert.deepEqual(dig(`anything.apps.${ZONE}`), [svc.address]);
    assert.deepEqual(dig(`cp1.${ZONE}`), [cp1.address]);
    assert.deepEqual(dig('-x', cp1.address), [`cp1.${ZONE}.`]);
    assert.deepEqual(dig('-x', svc.address), [`svc.${ZONE}.`]);
  });

  it('HAProxy on 6443 forwards to the controller (openssl s_server stands in for kube-apiserver)', async () => {
    // The backend's health check is GET /readyz over TLS: s_server -www answers 200 to any GET.
    net.ssh(
      cp1,
      [
        'openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=kube-apiserver stand-in on cp1" -keyout /root/standin.key -out /root/standin.crt 2>/dev/null',
        'systemd-run --quiet --unit=apiserver-standin openssl s_server -quiet -accept 6443 -cert /root/standin.crt -key /root/standin.key -www',
      ].join(' && '),
    );
    const deadline = Date.now() + 60_000;
    let last = '';
    while (Date.now() < deadline) {
      last = await throughHaproxy(svc.address).catch((e: Error) => e.message);
      if (last.startsWith('kube-apiserver stand-in on cp1|HTTP/1.0 200 ok')) return;
      await new Promise((r) => setTimeout(r, 2000));
    }
    assert.fail(`no answer from the controller through HAProxy: ${last}`);
  });

  it('the registry takes a push and serves the pull over TLS from the cluster CA, with auth', async () => {
    const ca = secret('cluster-ca-cert');
    const password = secret('registry-password');
    assert.ok(ca.includes('BEGIN CERTIFICATE') && password.length >= 16);
    // Blob uploads redirect to registry.<zone>: resolved through the services node's Bind.
    const anonymous = { host: `${svc.address}:5000`, ca, lookup: lookupVia(svc.address) };
    const authorized = {
      ...anonymous,
      authorization: `Basic ${Buffer.from(`kubemix:${password}`).toString('base64')}`,
    };
    assert.equal((await call('GET', `https://${svc.address}:5000/v2/`, anonymous)).status, 401);
    const pushed = await pushImage(authorized, 'e2e/hello', 'v1', { os: 'linux' });
    const pulled = await call('GET', `https://${svc.address}:5000/v2/e2e/hello/manifests/v1`, authorized, {
      accept: OCI_MANIFEST,
    });
    assert.equal(pulled.status, 200, pulled.body);
    assert.equal(digestOf(Buffer.from(pulled.body)), pushed.digest);
  });

  it('re-running changes nothing, and --check agrees', async () => {
    const again = await kubemix(['up', specFile, ...upFlags(), '--stop-after', 'task-create-services']);
    assert.equal(again.code, 0, output(again));
    assert.deepEqual(applied(again), []);
    assert.equal(again.events.find((e) => e['type'] === 'run:end')?.['changes'], 0, output(again));
    const check = await kubemix(['up', specFile, '--check', ...flags(), '--stop-after', 'task-create-services']);
    assert.equal(check.code, 0, output(check));
    assert.equal(check.events.find((e) => e['type'] === 'run:end')?.['changes'], 0, output(check));
  });

  it('host prep changes the controller; its files come from the download cache; pkgs.k8s.io stops, named', async () => {
    net.ssh(
      cp1,
      'fallocate -l 32M /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile && echo "/swapfile none swap sw 0 0" >> /etc/fstab && sysctl -qw net.ipv4.ip_forward=0',
    );
    const prep = await kubemix(['up', specFile, ...upFlags(), '--stop-after', 'task-prepare-cluster']);
    log(`host prep of cp1: ${prep.seconds.toFixed(1)} s`);
    assert.equal(prep.code, 3, output(prep));
    const failed = taskEvents(prep).filter((e) => e.state === 'failed');
    assert.deepEqual(
      failed.map((e) => e.id).sort(),
      CP1_FAILURES.map((n) => `task-prepare-cluster/cp1/${n}`),
      output(prep),
    );
    const error = (name: string) => failed.find((e) => e.id === `task-prepare-cluster/cp1/${name}`)?.error ?? '';
    assert.match(error('kubernetes-packages'), /Could not resolve host|resolve/i);
    // The made release has no containerd to check the rendered config with.
    assert.match(error('containerd'), /containerd/);
    const states = finalStates(prep);
    for (const name of ['containerd-binaries', 'runc', 'cni-plugins'])
      assert.equal(states.get(`task-prepare-cluster/cp1/${name}`), 'done', output(prep));
    // What cp1 installed is byte for byte what the test made, fetched from svc by SHA256.
    const installed = net.ssh(
      cp1,
      'sha256sum /usr/local/sbin/runc | cut -d" " -f1; cat /usr/local/bin/kubemix-e2e-containerd /opt/cni/bin/kubemix-e2e-cni',
    );
    assert.equal(
      installed,
      `${pins.get('linux/runc')}\nmade by the kubemix e2e test for linux/containerd.tar.gz\n` +
        'made by the kubemix e2e test for linux/cni-plugins.tgz\n',
    );
    for (const name of [
      'kernel-modules',
      'sysctls',
      'swap-off',
      'hostname',
      'etc-hosts',
      'registry-ca',
      'time-sync',
      'cgroup-v2',
      'download-tools',
      'firewall',
    ]) {
      assert.equal(states.get(`task-prepare-cluster/cp1/${name}`), 'done', name);
    }
    const state = net.ssh(
      cp1,
      [
        'lsmod | awk \'$1 == "br_netfilter" || $1 == "overlay" { print "module " $1 }\' | sort',
        'sysctl -n net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables',
        'echo "swap [$(swapon --noheadings --show)]"; grep swapfile /etc/fstab',
        'hostname; grep -c "^# BEGIN kubemix$" /etc/hosts',
        `openssl x509 -noout -fingerprint -sha256 -in /etc/containerd/certs.d/registry.${ZONE}:5000/ca.crt`,
        'timedatectl show --property=NTP --value',
      ].join('\n'),
    );
    const caFingerprint = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], {
      input: secret('cluster-ca-cert'),
      encoding: 'utf8',
    }).trim();
    assert.equal(
      state,
      [
        'module br_netfilter',
        'module overlay',
        '1',
        '1',
        'swap []',
        '#/swapfile none swap sw 0 0',
        'cp1',
        '1',
        caFingerprint,
        'yes',
        '',
      ].join('\n'),
    );
  });

  it('the download cache: TLS from the cluster CA; a tampered blob is refused by the node, named, nothing installed; the next run repairs it', async () => {
    const hash = pins.get('linux/runc') ?? assert.fail('runc is pinned');
    // The cache's certificate is the one the deployer issued from the cluster CA, for svc's address.
    const tls = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: svc.address, port: SERVICES.filesPort, ca: secret('cluster-ca-cert') }, () => {
        resolve(socket.authorized ? 'authorized' : String(socket.authorizationError));
        socket.end();
      });
      socket.on('error', reject);
    });
    assert.equal(tls, 'authorized');

    // Someone changes the cached runc on the services node after the deployment.
    net.ssh(svc, `printf 'tampered on the services node\\n' > ${FILES_PATHS.cache}/${hash}`);
    net.ssh(cp1, 'rm -f /usr/local/sbin/runc');
    const runc = 'task-prepare-cluster/cp1/runc';
    // The planned runc task again (its check fails: no runc), on cp1 only: svc's cache is not refilled.
    const refetch = () =>
      kubemix(['up', specFile, ...flags(), '--only', 'cp1', '--from', runc, '--stop-after', 'task-prepare-cluster']);
    const refused = await refetch();
    log(`runc fetched from a tampered cache: ${refused.seconds.toFixed(1)} s`);
    assert.equal(refused.code, 3, output(refused));
    const event = taskEvents(refused).find((e) => e.id === runc && e.state === 'failed');
    assert.match(
      event?.error ?? '',
      new RegExp(`sha256 mismatch for runc \\S+ \\(linux/runc\\): got [0-9a-f]{64}, want ${hash}; nothing installed`),
      output(refused),
    );
    assert.equal(net.ssh(cp1, 'test -e /usr/local/sbin/runc && echo installed || echo absent'), 'absent\n');

    // The services stage's cache task compares every blob's hash and uploads the verified file again.
    const cacheTask = 'task-create-services/svc/download-cache';
    const repaired = await kubemix([
      'up',
      specFile,
      ...flags(),
      '--only',
      'svc',
      '--from',
      cacheTask,
      '--stop-after',
      'task-create-services',
    ]);
    assert.equal(repaired.code, 0, output(repaired));
    assert.ok(
      repaired.events.some((e) => e['type'] === 'download' && e['id'] === 'linux/runc' && e['action'] === 'uploaded'),
      output(repaired),
    );
    const again = await refetch();
    assert.equal(finalStates(again).get(runc), 'done', output(again));
    assert.equal(net.ssh(cp1, 'sha256sum /usr/local/sbin/runc | cut -d" " -f1'), `${hash}\n`);
  });

  it('add-node: a worker with a MAC; only the services that depend on it change, then it boots by DHCP', async () => {
    writeSpec([
      hostEntry(svc, ['services']),
      hostEntry(cp1, ['control-plane']),
      hostEntry(w1, ['worker'], { mac: w1.mac }),
    ]);
    // w1 is still off: its facts fail (named), the services node is updated for it.
    const first = await kubemix(['add-node', specFile, ...flags(), '--stop-after', 'task-create-services']);
    log(`add-node with w1 off: ${first.seconds.toFixed(1)} s`);
    assert.equal(first.code, 3, output(first));
    assert.deepEqual(
      applied(first),
      ['task-create-services/svc/bind', 'task-create-services/svc/dnsmasq', 'task-create-services/svc/haproxy'],
      output(first),
    );
    // Its facts fail, and so do the underlay validations of the nodes that ping it (named, unreachable).
    const down = taskEvents(first).filter((e) => e.state === 'failed');
    assert.deepEqual(
      down.map((e) => e.id).sort(),
      ['task-gather-facts/w1/facts', 'task-run-validations/cp1/underlay', 'task-run-validations/svc/underlay'],
      output(first),
    );
    assert.match(down[0]?.error ?? '', /w1|198\.51\.100/);

    await net.start([w1]);
    // w1 runs firewalld (Debian does not by default): host prep must open the node ports in it.
    net.ssh(w1, 'systemctl enable --now --quiet firewalld && firewall-cmd --state');
    const leases = net.ssh(svc, 'cat /var/lib/misc/dnsmasq.leases');
    assert.match(leases, new RegExp(`${w1.mac} ${w1.address.replace(/\./g, '\\.')} w1 `), leases);
    assert.deepEqual(dig(`w1.${ZONE}`), [w1.address]);

    const second = await kubemix(['add-node', specFile, ...flags(), '--stop-after', 'task-prepare-cluster']);
    log(`add-node preparing w1: ${second.seconds.toFixed(1)} s`);
    const changed = applied(second);
    const otherHosts = changed.filter((id) => !id.includes('/w1/'));
    // /etc/hosts names only the node itself, the API and the registry: nothing on cp1 changes for w1;
    // only the underlay validations that failed while w1 was off run again (and pass).
    assert.deepEqual(
      [...otherHosts].sort(),
      ['task-run-validations/cp1/underlay', 'task-run-validations/svc/underlay'],
      output(second),
    );
    assert.ok(
      changed.includes('task-prepare-cluster/w1/sysctls') && changed.includes('task-gather-facts/w1/facts'),
      output(second),
    );
    assert.equal(net.ssh(w1, 'hostname; sysctl -n net.ipv4.ip_forward'), 'w1\n1\n');
    assert.ok(changed.includes('task-prepare-cluster/w1/firewall'), output(second));
    const ports = net
      .ssh(
        w1,
        'firewall-cmd --zone="$(firewall-cmd --get-default-zone)" --list-ports; firewall-cmd --zone=trusted --list-sources',
      )
      .split(/\s+/)
      .filter(Boolean)
      .sort();
    assert.deepEqual(ports, ['10.244.0.0/16', '10250/tcp', '10256/tcp', '30000-32767/tcp', '4789/udp']);
  });

  it('status: per node what is done, left and failed; exit 1', async () => {
    const status = await kubemix(['status', specFile, '--json']);
    assert.equal(status.code, 1, output(status));
    const doc = JSON.parse(status.stdout) as { hosts: { host: string; done: number; failed: number; left: number }[] };
    const byHost = new Map(doc.hosts.map((h) => [h.host, h]));
    assert.equal(byHost.get('svc')?.failed, 0);
    assert.equal(byHost.get('cp1')?.failed, CP1_FAILURES.length);
    assert.ok((byHost.get('w1')?.done ?? 0) > 5);
  });

  it('diagnose --out X.tar.gz: every node, the services node clean by its own checks, no secret; a stopped dnsmasq named', async () => {
    const archive = join(net.root, 'diag.tar.gz');
    const run = await kubemix(['diagnose', specFile, '--known-hosts', net.knownHosts, '--json', '--out', archive]);
    log(`diagnose: exit ${run.code}, ${run.seconds.toFixed(1)} s`);
    // No kubelet runs here (pkgs.k8s.io is out of reach): findings on cp1 and w1, exit 1, every node reached.
    assert.equal(run.code, 1, output(run));
    type Doc = { failed: string[]; findings: { id: string; node: string; evidence: string }[] };
    const doc = JSON.parse(run.stdout) as Doc;
    assert.deepEqual(doc.failed, []);
    assert.deepEqual(
      doc.findings.filter((f) => f.node === 'svc'),
      [],
      run.stdout,
    );
    log(`findings: ${doc.findings.map((f) => `${f.id} ${f.node}`).join('; ')}`);
    const out = join(net.root, 'diag');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archive, '-C', out]);
    const top = join(out, readdirSync(out)[0] ?? '');
    assert.deepEqual(readdirSync(top).sort(), ['cp1', 'findings.json', 'findings.txt', 'svc', 'w1']);
    const svcSections = readdirSync(join(top, 'svc')).sort();
    for (const section of ['service-states', 'haproxy-check', 'named-check', 'dnsmasq-check', 'registry-config'])
      assert.ok(svcSections.includes(`${section}.txt`), `svc/${section}.txt missing: ${svcSections.join(' ')}`);
    const read = (section: string): string => readFileSync(join(top, 'svc', `${section}.txt`), 'utf8');
    for (const check of ['haproxy-check', 'named-check', 'dnsmasq-check'])
      assert.match(read(check), /exit 0\s*$/, check);
    assert.deepEqual(read('service-states').trim().split('\n').sort(), [
      'dnsmasq active',
      'docker-registry active',
      'haproxy active',
      'named active',
    ]);
    assert.match(read('listening'), /:6443\b/);
    // No value of the state directory's secret store (registry password, cluster CA key, tokens) in the bundle.
    const store = JSON.parse(readFileSync(join(stateDir, 'secrets.json'), 'utf8')) as Record<string, { value: string }>;
    const everything = execFileSync('sh', ['-c', 'cat "$1"/*/* "$1"/*.json', 'sh', top], { encoding: 'utf8' });
    for (const [name, { value }] of Object.entries(store))
      assert.ok(value.length < 8 || !everything.includes(value), `secret ${name} reached the bundle`);

    net.ssh(svc, 'systemctl stop dnsmasq');
    try {
      const again = await kubemix([
        'diagnose',
        specFile,
        '--known-hosts',
        net.knownHosts,
        '--json',
        '--node',
        'svc',
        '--out',
        join(net.root, 'diag-svc'),
      ]);
      log(`diagnose --node svc with dnsmasq stopped: exit ${again.code}, ${again.seconds.toFixed(1)} s`);
      assert.equal(again.code, 1, output(again));
      const found = (JSON.parse(again.stdout) as Doc).findings;
      assert.deepEqual(
        found.map((f) => [f.node, f.id, f.evidence]),
        [['svc', 'services-down', 'dnsmasq inactive']],
      );
    } finally {
      net.ssh(svc, 'systemctl start dnsmasq');
    }
  });

  it('down --yes stops and removes the services and resets the nodes', async () => {
    const refused = await kubemix(['down', specFile, '--known-hosts', net.knownHosts]);
    assert.equal(refused.code, 2, output(refused));
    const gone = await kubemix(['down', specFile, '--yes', ...flags()]);
    log(`down --yes: ${gone.seconds.toFixed(1)} s`);
    assert.equal(gone.code, 0, output(gone));
    const left = net.ssh(
      svc,
      'for u in haproxy named dnsmasq docker-registry; do printf "%s=%s\\n" $u "$(systemctl is-active $u)"; done; ls /etc/haproxy/haproxy.cfg /etc/dnsmasq.d/kubemix.conf 2>&1 | grep -c "No such file"',
    );
    assert.equal(left, 'haproxy=inactive\nnamed=inactive\ndnsmasq=inactive\ndocker-registry=inactive\n2\n');
  });
});

/** A LookupFunction that asks only the given DNS server (IPv4). */
function lookupVia(server: string): LookupFunction {
  const resolver = new Resolver();
  resolver.setServers([server]);
  return ((
    hostname: string,
    options: { all?: boolean },
    callback: (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void,
  ) => {
    resolver.resolve4(hostname, (err, addresses) => {
      if (err !== null || addresses[0] === undefined) callback(err ?? new Error(`no A record for ${hostname}`), '', 4);
      else if (options.all === true)
        callback(
          null,
          addresses.map((address) => ({ address, family: 4 })),
        );
      else callback(null, addresses[0], 4);
    });
  }) as LookupFunction;
}

/** TLS through HAProxy's 6443: "<peer CN>|<first line of the answer to GET /readyz>". */
function throughHaproxy(address: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port: 6443, rejectUnauthorized: false, timeout: 5000 }, () => {
      const cn = socket.getPeerCertificate().subject?.CN ?? '';
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('end', () => resolve(`${String(cn)}|${answer.split('\r\n')[0] ?? ''}`));
      socket.write('GET /readyz HTTP/1.0\r\n\r\n');
    });
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}
