// kubemix's kubeadm configurations held against kubeadm itself, built here
// from the Go module proxy (scripts/kube-binaries.sh: kubeadm v1.35.4 and
// v1.36.3), for every bundled example, each with the kubeadm of its release:
// - `kubeadm config validate` accepts every init, Linux join and Windows join
//   configuration with no warning (strict decoding: a misspelt field fails);
// - `kubeadm config migrate` reads every field back as written (a field
//   kubeadm ignores, or reads as something else, fails);
// - `kubeadm init --dry-run` on the init configuration writes static Pods,
//   certificates and kubeconfigs that carry the plan: the API name and
//   address, certificate SANs, pod and service CIDRs, the node, the kubelet's
//   settings. Preflight checks this machine, not the configuration (and looks
//   the node name up in DNS): the dry-runs skip it (--skip-phases=preflight);
// - the Windows kubelet patch is one kubeadm applies (target, patch type);
// - `kubeadm config images list` names what the matrix names;
// - each node's UpgradeConfiguration is one kubeadm upgrade apply and node decode strictly and accept;
// - the kubeadm command lines of the upgrade plan parse with the target's kubeadm.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { kubeadmImageRefs } from '../src/matrix/kubeadm-images.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../src/plan/assemble.js';
import { assembleUpgradePlan } from '../src/plan/upgrade/assemble.js';
import { renderUpgradeKubeadm } from '../src/render/kubeadm/config.js';
import { CONTAINERD_PIPE, WIN } from '../src/render/windows/paths.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import {
  docsOf,
  goDuration,
  kubeadmConfigs,
  notCarried,
  probePatches,
  staticPodFlags,
  windowsPatches,
  writeAll,
  type KubeadmConfigFile,
  type Obj,
} from './helpers/kubeadm-configs.js';
import { runBuilt, type KubeRelease } from './helpers/kube-binaries.js';
import { scratch } from './helpers/shapes.js';

const EXAMPLES = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

function example(name: string): { assembled: AssembledPlan; model: ClusterModel } {
  const path = repoPath('examples', `${name}.yaml`);
  const model = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
  return { assembled: assemblePlan(model), model };
}

/**
 * kubeadm for Linux reads a criSocket without a unix:// scheme as a path and
 * prefixes it (kubeadm's defaults_unix.go); kubeadm.exe's scheme is npipe://
 * (defaults_windows.go), so on the Windows node the pipe is read as written.
 * The one line of output that is this machine's OS, not the configuration.
 */
const WINDOWS_SOCKET_ON_LINUX = new RegExp(
  `Usage of CRI endpoints without URL scheme is deprecated.*"${CONTAINERD_PIPE.replace(/[./]/g, '\\$&')}"`,
);

/** klog warning and error lines (`W1128 13:08:15.543921 …`) other than the one above. */
function warnings(stderr: string, windows: boolean): string[] {
  return stderr
    .split('\n')
    .filter((l) => /^[WE]\d{4} /.test(l))
    .filter((l) => !(windows && WINDOWS_SOCKET_ON_LINUX.test(l)));
}

/**
 * `kubeadm config migrate` (1.35 and 1.36) overwrites an InitConfiguration's
 * timeouts.controlPlaneComponentHealthCheck with v1beta3's
 * apiServer.timeoutForControlPlane, which a v1beta4 document converts to 0
 * (util/config/common.go defaultMigrateMutators, "remove when v1beta3 is
 * removed"); `kubeadm init` keeps it (util/config/initconfiguration.go). The
 * dry-run below reads it back from the startup probes kubeadm derives from it.
 */
const MIGRATE_RESETS = /^timeouts\.controlPlaneComponentHealthCheck: /;

/** kubeadm's startup probe: one try every 10 s for the whole control-plane timeout (util/staticpod/utils.go). */
const STARTUP_PERIOD_SECONDS = 10;
/** kubeadm's probe timeout and liveness threshold when nothing patches them (same file). */
const PROBE_DEFAULTS = { timeoutSeconds: 15, livenessFailureThreshold: 8 };

const tmp = scratch('kubeadm-real');
after(() => tmp.remove());

for (const name of EXAMPLES) {
  describe(`kubeadm on examples/${name}.yaml`, () => {
    const { assembled, model } = example(name);
    const release = model.versions.kubernetesMinor as KubeRelease;
    const configs = kubeadmConfigs(assembled);
    const dir = join(tmp.dir, name);
    const kubeadm = { name: 'kubeadm', release } as const;
    const write = (c: KubeadmConfigFile): string =>
      writeAll(join(dir, c.node), new Map([[`${c.kind}.yaml`, c.text]]))[0] ?? '';

    it(`kubeadm ${release} validates every configuration, with no warning`, async () => {
      const linux = assembled.plan.nodes.filter((n) => n.osFamily === 'linux' && n.role !== 'services').length;
      const windows = assembled.plan.nodes.filter((n) => n.osFamily === 'windows').length;
      assert.equal(configs.filter((c) => c.kind !== 'windows-join').length, linux, 'one per Linux node');
      assert.equal(configs.filter((c) => c.kind === 'windows-join').length, windows, 'one per Windows node');
      assert.equal(configs.filter((c) => c.kind === 'init').length, 1);
      for (const c of configs) {
        const r = await runBuilt(kubeadm, ['config', 'validate', '--config', write(c)]);
        assert.equal(r.code, 0, `${c.node} ${c.remotePath}: ${r.stderr}`);
        assert.equal(r.stdout.trim(), 'ok');
        assert.deepEqual(warnings(r.stderr, c.kind === 'windows-join'), [], `${c.node} ${c.remotePath}`);
      }
    });

    it('kubeadm reads every field back as written (`kubeadm config migrate`)', async () => {
      for (const c of configs) {
        const out = join(dir, c.node, `${c.kind}.migrated.yaml`);
        const r = await runBuilt(kubeadm, ['config', 'migrate', '--old-config', write(c), '--new-config', out]);
        assert.equal(r.code, 0, `${c.node}: ${r.stderr}`);
        const got = docsOf(readFileSync(out, 'utf8'));
        // kubeadm's own kinds; a KubeletConfiguration beside them is checked by the dry-run below.
        for (const want of c.docs.filter((d) => String(d['apiVersion']).startsWith('kubeadm.k8s.io/'))) {
          const read = got.find((g) => g['kind'] === want['kind']);
          assert.ok(read !== undefined, `${c.node}: kubeadm dropped ${String(want['kind'])}`);
          const expected =
            c.kind === 'windows-join'
              ? {
                  ...want,
                  nodeRegistration: { ...want['nodeRegistration'], criSocket: `unix://${CONTAINERD_PIPE}` },
                }
              : want;
          assert.deepEqual(
            notCarried(expected, read).filter((d) => !(want['kind'] === 'InitConfiguration' && MIGRATE_RESETS.test(d))),
            [],
            `${c.node} ${String(want['kind'])}`,
          );
        }
      }
    });

    describe('kubeadm init --dry-run', () => {
      const init = configs.find((c) => c.kind === 'init')!;
      const initConfig = init.docs.find((d) => d['kind'] === 'InitConfiguration') as Obj;
      const cluster = init.docs.find((d) => d['kind'] === 'ClusterConfiguration') as Obj;
      const node = assembled.plan.nodes.find((n) => n.name === init.node)!;
      const out = join(dir, 'dry-run');
      const read = (f: string): string => readFileSync(join(out, f), 'utf8');

      // The probe patches land in a folder of the test's; the configuration names it instead of the node's.
      const patches = probePatches(assembled, init.node);
      const patchDir = join(dir, init.node, 'probe-patches');

      before(async () => {
        writeAll(patchDir, patches);
        const config =
          initConfig['patches'] === undefined
            ? write(init)
            : writeAll(
                join(dir, init.node),
                new Map([
                  [
                    'init-local-patches.yaml',
                    init.docs
                      .map((d) => (d['kind'] === 'InitConfiguration' ? { ...d, patches: { directory: patchDir } } : d))
                      .map((d) => stringify(d))
                      .join('---\n'),
                  ],
                ]),
              )[0]!;
        const r = await runBuilt(
          kubeadm,
          ['init', '--dry-run', '--config', config, '--skip-phases=preflight'],
          // Everything kubeadm would write lands here instead of /etc/kubernetes and /var/lib/kubelet.
          { env: { ...process.env, KUBEADM_INIT_DRYRUN_DIR: out }, timeoutMs: 180_000 },
        );
        writeAll(out, new Map([['stdout.txt', r.stdout]]));
        assert.equal(r.code, 0, r.stderr);
      });

      it('the API server: advertised address, port, service CIDR, Node,RBAC and NodeRestriction', () => {
        const flags = staticPodFlags(read('kube-apiserver.yaml'));
        assert.equal(flags.get('advertise-address'), node.ip);
        assert.equal(flags.get('secure-port'), String(initConfig['localAPIEndpoint']['bindPort']));
        assert.equal(flags.get('service-cluster-ip-range'), cluster['networking']['serviceSubnet']);
        assert.equal(flags.get('authorization-mode'), 'Node,RBAC');
        assert.equal(flags.get('enable-admission-plugins'), 'NodeRestriction');
        assert.match(
          read('kube-apiserver.yaml'),
          new RegExp(
            `image: registry\\.k8s\\.io/kube-apiserver:v${model.versions.kubernetes.replace(/\./g, '\\.')}\\n`,
          ),
        );
      });

      it('its serving certificate names every SAN kubemix asks for, the node and the API service', () => {
        const cert = new X509Certificate(read('apiserver.crt'));
        const sans = (cert.subjectAltName ?? '').split(', ');
        const ip = (v: string) => /^[\d.]+$/.test(v);
        for (const san of cluster['apiServer']['certSANs'] as string[])
          assert.ok(sans.includes(ip(san) ? `IP Address:${san}` : `DNS:${san}`), `${san} in ${cert.subjectAltName}`);
        assert.ok(sans.includes(`IP Address:${node.ip}`));
        assert.ok(sans.includes(`DNS:${node.name}`));
        assert.ok(sans.includes(`DNS:kubernetes.default.svc.${cluster['networking']['dnsDomain']}`));
      });

      it("kubeconfigs: the user's reaches the API by its name (controlPlaneEndpoint), the node's own by its address", () => {
        const server = (f: string) => (parse(read(f)) as Obj)['clusters'][0]['cluster']['server'];
        const local = `https://${node.ip}:${initConfig['localAPIEndpoint']['bindPort']}`;
        assert.equal(server('admin.conf'), `https://${cluster['controlPlaneEndpoint']}`);
        // kubeadm ≥ 1.31 points the first control plane's own components at its local API server.
        for (const f of ['kubelet.conf', 'controller-manager.conf', 'scheduler.conf'])
          assert.equal(server(f), local, f);
      });

      it('the controller manager allocates node CIDRs from the pod CIDR, with the cluster name', () => {
        const flags = staticPodFlags(read('kube-controller-manager.yaml'));
        assert.equal(flags.get('allocate-node-cidrs'), 'true');
        assert.equal(flags.get('cluster-cidr'), cluster['networking']['podSubnet']);
        assert.equal(flags.get('service-cluster-ip-range'), cluster['networking']['serviceSubnet']);
        assert.equal(flags.get('cluster-name'), cluster['clusterName']);
      });

      it('etcd advertises the node address', () => {
        const flags = staticPodFlags(read('etcd.yaml'));
        assert.equal(flags.get('advertise-client-urls'), `https://${node.ip}:2379`);
        assert.equal(flags.get('name'), node.name);
      });

      it('every extraArgs kubemix sets reaches its component, and kube-apiserver itself parses each of its own', async () => {
        const components: [string, Obj | undefined][] = [
          ['kube-apiserver.yaml', cluster['apiServer']],
          ['kube-controller-manager.yaml', cluster['controllerManager']],
          ['kube-scheduler.yaml', cluster['scheduler']],
          ['etcd.yaml', cluster['etcd']?.['local']],
        ];
        for (const [file, c] of components) {
          const flags = staticPodFlags(read(file));
          for (const a of (c?.['extraArgs'] ?? []) as { name: string; value: string }[])
            assert.equal(flags.get(a.name), a.value, `${file} --${a.name}`);
          // etcd's --feature-gates are kubeadm's own (cmd/kubeadm/app/phases/etcd/local.go); the others get none unasked.
          if (c?.['extraArgs'] === undefined && file !== 'etcd.yaml')
            assert.equal(flags.has('feature-gates'), false, file);
        }
        // kubeadm copies extraArgs without knowing them: the component's own flag parser decides
        // (an unknown flag or a bad value fails before --help prints; 1.36's binary, same flags as 1.35's).
        const apiserver = { name: 'kube-apiserver', release: '1.36' } as const;
        const controllerManager = { name: 'kube-controller-manager', release: '1.36' } as const;
        // kube-scheduler takes the same --leader-elect-* flags (component-base); it is not built here.
        const parsers = [
          [apiserver, cluster['apiServer']],
          [controllerManager, cluster['controllerManager']],
          [controllerManager, cluster['scheduler']],
        ] as const;
        for (const [tool, c] of parsers)
          for (const a of (c?.['extraArgs'] ?? []) as { name: string; value: string }[]) {
            const r = await runBuilt(tool, [`--${a.name}=${a.value}`, '--help']);
            assert.equal(r.code, 0, `${tool.name} --${a.name}=${a.value}: ${r.stderr.slice(0, 300)}`);
          }
        const unknown = await runBuilt(apiserver, ['--etcd-no-such-timeout=30s', '--help']);
        assert.notEqual(unknown.code, 0, 'the check can fail: an unknown flag is refused');
      });

      it("the kubelet: node IP, systemd cgroups, swap refused, cluster DNS in the service CIDR, the spec's runtime request timeout", () => {
        assert.match(read('kubeadm-flags.env'), new RegExp(`--node-ip=${node.ip.replace(/\./g, '\\.')}[" ]`));
        const kubelet = parse(read('config.yaml')) as Obj;
        assert.equal(kubelet['cgroupDriver'], 'systemd');
        assert.equal(kubelet['failSwapOn'], true);
        assert.equal(kubelet['clusterDomain'], cluster['networking']['dnsDomain']);
        const [a, b, c] = String(cluster['networking']['serviceSubnet']).split('.');
        assert.deepEqual(kubelet['clusterDNS'], [`${a}.${b}.${c}.10`]);
        const timeout = model.kubeadm.kubelet?.runtimeRequestTimeout;
        if (timeout !== undefined) assert.equal(goDuration(kubelet['runtimeRequestTimeout']), timeout * 1000);
      });

      it("every control-plane probe carries the spec's slack: kubeadm's timeouts and kubemix's probe patches", () => {
        const probes = model.kubeadm.controlPlaneProbes;
        assert.equal(patches.size, probes === undefined ? 0 : 4, 'one patch per component, only when the spec asks');
        assert.equal(initConfig['patches'] !== undefined, patches.size > 0, 'the configuration names the patches');
        const window = String(initConfig['timeouts']?.['controlPlaneComponentHealthCheck'] ?? '4m');
        const startupThreshold = Math.ceil(goDuration(window)! / 1000 / STARTUP_PERIOD_SECONDS);
        const timeoutSeconds = probes?.timeoutSeconds ?? PROBE_DEFAULTS.timeoutSeconds;
        const liveness = probes?.livenessFailureThreshold ?? PROBE_DEFAULTS.livenessFailureThreshold;
        for (const component of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
          const container = (parse(read(`${component}.yaml`)) as Obj)['spec']['containers'][0] as Obj;
          assert.equal(container['startupProbe']['failureThreshold'], startupThreshold, `${component} startup window`);
          assert.equal(container['livenessProbe']['failureThreshold'], liveness, `${component} liveness`);
          for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'].filter((k) => k in container))
            assert.equal(container[probe]['timeoutSeconds'], timeoutSeconds, `${component} ${probe}`);
        }
      });

      it("the node registers with the plan's taints (none: kubeadm adds no control-plane taint)", () => {
        const stdout = read('stdout.txt');
        const taints = (initConfig['nodeRegistration']['taints'] ?? []) as Obj[];
        if (taints.length === 0) assert.doesNotMatch(stdout, /node-role\.kubernetes\.io\/control-plane:NoSchedule/);
        for (const t of taints) assert.match(stdout, new RegExp(`key: ${String(t['key']).replace(/[./]/g, '\\$&')}`));
      });
    });

    it(`kubeadm ${release} pulls exactly the images the matrix names`, async () => {
      const init = configs.find((c) => c.kind === 'init')!;
      const r = await runBuilt(kubeadm, ['config', 'images', 'list', '--config', write(init)]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), kubeadmImageRefs(model.versions.kubernetes));
    });

    const windowsNodes = assembled.plan.nodes.filter((n) => n.osFamily === 'windows');
    if (windowsNodes.length > 0)
      it("kubeadm applies the Windows nodes' kubelet patch (name, patch type, content)", async () => {
        const init = configs.find((c) => c.kind === 'init')!;
        for (const n of windowsNodes) {
          const patches = windowsPatches(assembled, n.name);
          assert.deepEqual([...patches.keys()], [WIN.kubeletPatch.slice(WIN.patchesDir.length + 1)]);
          const patchDir = join(dir, n.name, 'patches');
          writeAll(patchDir, patches);
          const out = join(dir, n.name, 'patched');
          // kubeadm ≥ 1.36 takes the directory from the configuration only (no --patches beside --config).
          const withPatches = stringifyDocs(
            init.docs.map((d) => (d['kind'] === 'InitConfiguration' ? { ...d, patches: { directory: patchDir } } : d)),
          );
          const config = writeAll(join(dir, n.name), new Map([['init-patched.yaml', withPatches]]))[0] ?? '';
          const r = await runBuilt(kubeadm, ['init', '--dry-run', '--config', config, '--skip-phases=preflight'], {
            env: { ...process.env, KUBEADM_INIT_DRYRUN_DIR: out },
            timeoutMs: 180_000,
          });
          assert.equal(r.code, 0, r.stderr);
          assert.match(
            r.stdout,
            /Applied patch of type "application\/merge-patch\+json" to target "kubeletconfiguration"/,
          );
          const patched = parse(readFileSync(join(out, 'config.yaml'), 'utf8')) as Obj;
          const patch = parse([...patches.values()][0] ?? '') as Obj;
          // containerRuntimeEndpoint: kubeadm (NodeLocalCRISocket, on in 1.35 and 1.36) writes the node's
          // nodeRegistration.criSocket over every patch (phases/kubelet/config.go, instance-config.yaml): on
          // the Windows node that is the join's criSocket, which must then be the same pipe.
          const winJoin = configs.find((c) => c.node === n.name && c.kind === 'windows-join')!;
          const joinSocket = winJoin.docs[0]?.['nodeRegistration']?.['criSocket'];
          for (const [k, v] of Object.entries(patch)) {
            if (k === 'containerRuntimeEndpoint') assert.equal(joinSocket, v, `${n.name}: the join's criSocket`);
            else assert.deepEqual(patched[k], v, `${n.name}: ${k} after kubeadm's patch`);
          }
        }
      });

    const upgradeFiles = assembled.plan.nodes.flatMap((n) => {
      if (n.osFamily !== 'linux' || n.role === 'services') return [];
      const rendered = renderUpgradeKubeadm(model, n);
      return rendered === undefined ? [] : [{ node: n.name, text: rendered.content }];
    });
    if (upgradeFiles.length > 0)
      it("kubeadm reads each node's UpgradeConfiguration: every field known, its checks passed", async () => {
        // `config validate` does not read this kind; `upgrade apply|node` decodes it strictly (a warning per
        // unknown field) and validates it (ignorePreflightErrors included) before they look for a cluster.
        // --dry-run, with its scratch directory here instead of /etc/kubernetes/tmp.
        const env = { ...process.env, KUBEADM_UPGRADE_DRYRUN_DIR: join(dir, 'upgrade-dryrun') };
        for (const f of upgradeFiles) {
          const path = writeAll(join(dir, f.node), new Map([['upgrade.yaml', f.text]]))[0] ?? '';
          for (const verb of [['apply', `v${model.versions.kubernetes}`, '--yes'], ['node']]) {
            const r = await runBuilt(
              kubeadm,
              ['upgrade', ...verb, '--dry-run', '--config', path, '--kubeconfig', join(dir, 'no-such.conf')],
              { env },
            );
            const said = `${f.node} kubeadm upgrade ${verb[0] ?? ''}: ${r.stderr}${r.stdout}`;
            assert.doesNotMatch(r.stderr, /strict decoding error|unknown field/, said);
            // Past the configuration: it went on to read the cluster's own (and found no cluster).
            assert.match(r.stdout, /Reading configuration from the "kubeadm-config" ConfigMap/, said);
          }
        }
      });

    if (release === '1.36')
      it('the upgrade plan to this release: every kubeadm command line parses with kubeadm 1.36', async () => {
        const up = assembleUpgradePlan(model, { from: '1.35.6', maxUnavailable: 1 });
        const lines = up.plan.tasks.flatMap((t) => kubeadmCommandLines(t.apply.script));
        assert.ok(
          lines.some((l) => l[0] === 'upgrade' && l[1] === 'apply'),
          'kubeadm upgrade apply',
        );
        assert.ok(
          lines.some((l) => l[0] === 'upgrade' && l[1] === 'node'),
          'kubeadm upgrade node',
        );
        for (const args of lines) {
          // cobra parses every flag before it looks at --help: an unknown flag or a missing value fails here.
          const r = await runBuilt(kubeadm, [...args, '--help']);
          assert.equal(r.code, 0, `kubeadm ${args.join(' ')}: ${r.stderr}`);
        }
      });
  });
}

const stringifyDocs = (docs: readonly Obj[]): string => docs.map((d) => stringify(d)).join('---\n');

/** `kubeadm …` (sh) and `& '…\kubeadm.exe' …` (PowerShell) command lines of a script, as argument lists. */
function kubeadmCommandLines(script: string): string[][] {
  const out: string[][] = [];
  for (const line of script.split('\n')) {
    const m = /(?:^|[;&|]\s*)kubeadm (upgrade .*)$/.exec(line) ?? /^& '[^']*\\kubeadm\.exe' (.*)$/.exec(line);
    if (m !== null) out.push(words(m[1] ?? ''));
  }
  return out;
}

/** Words of a command line with '…' quoting (sh and PowerShell agree on single quotes without escapes). */
function words(text: string): string[] {
  return [...text.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}
