// flanneld and kube-proxy on Windows as HostProcess DaemonSets: by default
// Microsoft's HostProcess base image (pinned by digest) running the binaries
// kubemix installed on the host, or the spec's images. Each pod has its own
// hour-long ServiceAccount token the kubelet renews; the manifests validate
// against the Kubernetes schemas and follow the HostProcess rules; no
// native service, no minted token; the node keeps its launchers and files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { lintClusterFor } from '../../src/lint/cluster.js';
import { lintSources } from '../../src/lint/engine.js';
import { IMAGES } from '../../src/matrix/index.js';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { WIN } from '../../src/render/windows/paths.js';
import { readSpec } from '../../src/spec/read.js';
import { specText, type Combo } from './fixtures.js';
import { lintPowerShell, parseErrors } from './powershell.js';

type Obj = Record<string, any>;
const FLANNEL = 'registry.example.com/flannel:v0.28.4-hostprocess';
const PROXY = 'registry.example.com/kube-proxy:v1.36.2-hostprocess';
const BASE = `${IMAGES.hostProcessBase.repository}:${IMAGES.hostProcessBase.tag}@${IMAGES.hostProcessBase.digest}`;

function modelFor(
  backend: Combo['backend'],
  opts: { plugin?: string; os?: string; images?: boolean } = {},
): ClusterModel {
  const images =
    opts.images === true
      ? `  windows:
    hostProcess:
      flannelImage: ${FLANNEL}
      kubeProxyImage: ${PROXY}
`
      : '';
  const text = `${specText({ k8s: '1.36', os: (opts.os ?? 'windows-2025') as Combo['os'], backend })}${images}`.replace(
    'plugin: flannel',
    `plugin: ${opts.plugin ?? 'flannel'}`,
  );
  return resolveModel(readSpec({ kind: 'file', path: 'hostprocess.yaml', text }));
}

function manifest(model: ClusterModel, name = 'windows-hostprocess'): string {
  const file = assemblePlan(model).files.find((f) => f.node === 'cluster' && f.remotePath === `manifests/${name}.yaml`);
  assert.ok(file, `manifests/${name}.yaml`);
  return file.content;
}

const objects = (text: string): Obj[] => parseAllDocuments(text).map((d) => d.toJS() as Obj);

function nodeFile(model: ClusterModel, path: string): string {
  const f = assemblePlan(model).files.find((x) => x.node === 'win-01' && x.remotePath === path);
  assert.ok(f, path);
  return f.content;
}

describe('Windows flanneld and kube-proxy as HostProcess DaemonSets', () => {
  for (const [backend, images] of [
    ['vxlan', false],
    ['host-gw', false],
    ['vxlan', true],
  ] as const) {
    const model = modelFor(backend, { images });
    const { plan } = assemblePlan(model);
    const win = plan.tasks.filter((t) => t.host === 'win-01');
    const label = `${backend}${images ? ", the spec's images" : ', the default image'}`;

    it(`${label}: DaemonSets validate, follow the HostProcess rules and carry their own hour-long token`, () => {
      const sets = objects(manifest(model));
      assert.deepEqual(
        sets.map((s) => [s.metadata.namespace, s.metadata.name]),
        [
          ['kube-flannel', 'kube-flannel-ds-windows'],
          ['kube-system', 'kube-proxy-windows'],
        ],
      );
      for (const ds of sets) {
        assert.doesNotThrow(
          () => new DaemonSet(ds as ConstructorParameters<typeof DaemonSet>[0]).validate(),
          ds.metadata.name,
        );
        const pod = ds.spec.template.spec;
        assert.equal(pod.hostNetwork, true);
        assert.deepEqual(pod.securityContext.windowsOptions, {
          hostProcess: true,
          runAsUserName: 'NT AUTHORITY\\SYSTEM',
        });
        assert.deepEqual(pod.nodeSelector, { 'kubernetes.io/os': 'windows' });
        assert.deepEqual(pod.tolerations, [{ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' }]);
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          assert.equal(c.securityContext?.windowsOptions?.hostProcess, true, `${ds.metadata.name}/${c.name}`);
          assert.equal(c.securityContext?.windowsOptions?.runAsUserName, 'NT AUTHORITY\\SYSTEM');
        }
        assert.deepEqual(ds.spec.selector.matchLabels, { app: ds.metadata.name });
        // Not the default token volume (3607 s, which the API server extends to a year), an explicit 3600 s one.
        assert.equal(pod.automountServiceAccountToken, false);
        const volume = pod.volumes.find((v: Obj) => v.projected !== undefined);
        assert.deepEqual(volume.projected.sources[0], {
          serviceAccountToken: { path: 'token', expirationSeconds: 3600 },
        });
        assert.deepEqual(pod.containers[0].volumeMounts, [
          { name: volume.name, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
        ]);
        // The API by address: the kubernetes Service VIP needs kube-proxy first.
        const env = Object.fromEntries(
          pod.containers[0].env.map((e: Obj) => [e.name, e.value ?? e.valueFrom.fieldRef.fieldPath]),
        );
        assert.equal(env.KUBERNETES_SERVICE_HOST, model.cluster.apiEndpoint.address);
        assert.equal(env.KUBERNETES_SERVICE_PORT, '6443');
        assert.equal(env.NODE_NAME, 'spec.nodeName');
      }
      const [flannel, proxy] = sets.map((s) => s.spec.template.spec.containers[0]);
      assert.equal(flannel.image, images ? FLANNEL : BASE);
      assert.equal(proxy.image, images ? PROXY : BASE);
      assert.equal(sets[0]?.spec.template.spec.serviceAccountName, 'flannel-windows');
      assert.equal(sets[1]?.spec.template.spec.serviceAccountName, 'kube-proxy');
      assert.deepEqual(flannel.args.slice(-2), ['-File', WIN.flanneldLauncher]);
      assert.deepEqual(proxy.args.slice(-2), ['-File', WIN.kubeProxyLauncher]);
    });

    it(`${label}: the launchers run the right binaries with the pod's own token, never a kubeconfig`, () => {
      const flanneld = nodeFile(model, WIN.flanneldLauncher);
      const proxy = nodeFile(model, WIN.kubeProxyLauncher);
      const template = nodeFile(model, WIN.kubeProxyConfigTemplate);
      for (const s of [flanneld, proxy]) {
        assert.deepEqual(parseErrors(s), [], s);
        assert.deepEqual(lintPowerShell(s), []);
        assert.doesNotMatch(s, /kubeconfig|token/i);
        // A service of an earlier kubemix is retired, only when its command line is kubemix's.
        assert.match(s, /Remove-KubemixRetiredService -Name '(flanneld|kube-proxy)' -Marker 'C:\\k\\/);
      }
      assert.doesNotMatch(template, /clientConnection|kubeconfig/);
      if (images) {
        assert.match(flanneld, /& \(Join-Path \$env:CONTAINER_SANDBOX_MOUNT_POINT 'flanneld\.exe'\)/);
        assert.match(proxy, /& \(Join-Path \$env:CONTAINER_SANDBOX_MOUNT_POINT 'kube-proxy\.exe'\)/);
      } else {
        assert.match(flanneld, /& 'C:\\k\\bin\\flanneld\.exe' '--kube-subnet-mgr' "--iface=\$env:NODE_IP"/);
        assert.match(proxy, /& 'C:\\k\\bin\\kube-proxy\.exe' '--config=C:\\k\\kube-proxy\\config\.yaml'/);
      }
      assert.doesNotMatch(flanneld, /--ip-masq/);
      // kube-proxy's launcher waits for the network and takes the source VIP at every start; it deletes no HNS policy.
      assert.match(proxy, /while \(\$null -eq \(\$net = Get-KubemixHnsNetwork -Name '(flannel\.4096|cbr0)'\)\)/);
      assert.doesNotMatch(proxy, /policylists|Remove-HnsPolicyList|DELETE/);
      assert.equal(/host-local\.exe/.test(proxy), backend === 'vxlan');
    });

    it(`${label}: plain YAML that kubemix lint accepts for a mixed cluster`, async () => {
      const text = manifest(model);
      assert.doesNotMatch(text, /[&*]a\d/, 'no YAML anchors or aliases');
      const { findings } = await lintSources([{ path: 'windows-hostprocess.yaml', text }], {
        cluster: lintClusterFor(['windows-2025']),
      });
      assert.deepEqual(
        findings.map((f) => f.rule),
        [],
      );
    });

    it(`${label}: no native service, no minted token; the binaries ${images ? 'come from the images' : "are kubemix's"}`, () => {
      const names = win.map((t) => t.name);
      assert.ok(!names.some((n) => ['win-flanneld', 'win-kube-proxy', 'win-source-vip'].includes(n)), names.join(' '));
      assert.ok(!plan.tasks.some((t) => /create token/.test(t.apply.script)), 'a token is minted');
      const binaries = win.find((t) => t.name === 'win-binaries')?.apply.script ?? '';
      assert.doesNotMatch(binaries, /winsw/i);
      assert.equal(/kube-proxy\.exe/.test(binaries), !images);
      assert.equal(/flanneld\.exe/.test(binaries), !images);
      const boot = nodeFile(model, WIN.bootScript);
      assert.doesNotMatch(boot, /Start-Service -Name '(flanneld|kube-proxy)'/);
      assert.match(boot, /'start-kubelet' \{\n {6}Start-Service -Name 'kubelet'\n {4}\}/);
      // What the pods read is on the node before the join lets them start.
      const files = win.find((t) => t.name === 'win-hostprocess-files');
      const join = win.find((t) => t.name === 'win-kubeadm-join');
      assert.ok(files !== undefined && join?.after.includes(files.id));
      for (const path of [WIN.flannelNetConf, WIN.flanneldLauncher, WIN.kubeProxyLauncher, WIN.kubeProxyConfigTemplate])
        assert.ok(
          files.uploads.some((u) => u.artifact === `win-01:${path}`),
          path,
        );
    });

    it(`${label}: every script parses and passes the rules`, () => {
      for (const t of win)
        for (const c of [t.check, t.apply]) {
          if (c === null) continue;
          assert.deepEqual(parseErrors(c.script), [], t.id);
          assert.deepEqual(lintPowerShell(c.script), [], t.id);
        }
    });
  }

  it("flannel-windows may change only its pod's own Node: the admission policy validates and names the token's node claim", () => {
    const docs = objects(manifest(modelFor('vxlan'), 'flannel-windows-rbac'));
    const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy') ?? assert.fail('no policy');
    const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding') ?? assert.fail('no binding');
    assert.doesNotThrow(() => new ValidatingAdmissionPolicy(policy as never).validate());
    assert.doesNotThrow(() => new ValidatingAdmissionPolicyBinding(binding as never).validate());
    assert.equal(binding.spec.policyName, policy.metadata.name);
    assert.deepEqual(binding.spec.validationActions, ['Deny']);
    assert.equal(policy.spec.failurePolicy, 'Fail');
    assert.match(policy.spec.matchConditions[0].expression, /system:serviceaccount:kube-flannel:flannel-windows/);
    assert.deepEqual(policy.spec.matchConstraints.resourceRules[0].resources, ['nodes', 'nodes/status']);
    assert.match(
      policy.spec.validations[0].expression,
      /request\.userInfo\.extra\['authentication\.kubernetes\.io\/node-name'\]\[0\] == object\.metadata\.name/,
    );
  });

  it("Calico: the kube-proxy pod only (the spec's kubeProxyImage if given, with a warning for flannelImage); none without Windows nodes", () => {
    const calico = modelFor('vxlan', { plugin: 'calico', os: 'windows-2022' });
    assert.deepEqual(
      objects(manifest(calico)).map((d) => d.metadata.name),
      ['kube-proxy-windows'],
    );
    assert.match(nodeFile(calico, WIN.kubeProxyLauncher), /Get-KubemixCalicoEndpoint/);
    const own = modelFor('vxlan', { plugin: 'calico', os: 'windows-2022', images: true });
    assert.equal(objects(manifest(own))[0]?.spec.template.spec.containers[0].image, PROXY);
    assert.ok(own.warnings.some((w) => w.code === 'windows.hostprocess-unused'));
    const linuxOnly = modelFor('vxlan', { os: 'debian-13', images: true });
    assert.ok(linuxOnly.warnings.some((w) => w.code === 'windows.hostprocess-unused'));
    assert.equal(linuxOnly.windowsHostProcess, undefined);
    assert.ok(!assemblePlan(linuxOnly).files.some((f) => f.remotePath.includes('hostprocess')));
  });
});
