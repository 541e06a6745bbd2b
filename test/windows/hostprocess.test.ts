// Optional HostProcess mode: flanneld and kube-proxy as HostProcess
// DaemonSets from images the user names. The manifests validate against the
// Kubernetes schemas and follow the HostProcess rules; the native flanneld
// and kube-proxy services are not planned; the node keeps its own files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { lintClusterFor } from '../../src/lint/cluster.js';
import { lintSources } from '../../src/lint/engine.js';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { readSpec } from '../../src/spec/read.js';
import { specText, type Combo } from './fixtures.js';
import { lintPowerShell, parseErrors } from './powershell.js';

type Obj = Record<string, any>;
const FLANNEL = 'registry.example.com/flannel:v0.28.4-hostprocess';
const PROXY = 'registry.example.com/kube-proxy:v1.36.2-hostprocess';

function modelFor(backend: Combo['backend'], plugin = 'flannel', os: string = 'windows-2025'): ClusterModel {
  const text = `${specText({ k8s: '1.36', os: os as Combo['os'], backend })}  windows:
    hostProcess:
      flannelImage: ${FLANNEL}
      kubeProxyImage: ${PROXY}
`.replace('plugin: flannel', `plugin: ${plugin}`);
  return resolveModel(readSpec({ kind: 'file', path: 'hostprocess.yaml', text }));
}

function manifest(model: ClusterModel): string {
  const file = assemblePlan(model).files.find(
    (f) => f.node === 'cluster' && f.remotePath === 'manifests/windows-hostprocess.yaml',
  );
  assert.ok(file, 'manifests/windows-hostprocess.yaml');
  return file.content;
}

function daemonSets(model: ClusterModel): Obj[] {
  return parseAllDocuments(manifest(model)).map((d) => d.toJS() as Obj);
}

describe('HostProcess mode', () => {
  for (const backend of ['vxlan', 'host-gw'] as const) {
    const model = modelFor(backend);
    const { plan, files } = assemblePlan(model);
    const win = plan.tasks.filter((t) => t.host === 'win-01');

    it(`${backend}: DaemonSets validate and follow the HostProcess rules`, () => {
      const sets = daemonSets(model);
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
          assert.equal(
            c.securityContext?.windowsOptions?.hostProcess,
            true,
            `${ds.metadata.name}/${c.name} is HostProcess`,
          );
          assert.equal(c.securityContext?.windowsOptions?.runAsUserName, 'NT AUTHORITY\\SYSTEM');
        }
        assert.deepEqual(ds.spec.selector.matchLabels, { app: ds.metadata.name });
      }
      const [flannel, proxy] = sets.map((s) => s.spec.template.spec.containers[0]);
      assert.equal(flannel.image, FLANNEL);
      assert.equal(proxy.image, PROXY);
      assert.deepEqual(
        flannel.env.map((e: Obj) => [e.name, e.valueFrom?.fieldRef.fieldPath ?? e.value]),
        [
          ['NODE_NAME', 'spec.nodeName'],
          ['NODE_IP', 'status.hostIP'],
          ['KUBERNETES_SERVICE_HOST', model.cluster.apiEndpoint.address],
          ['KUBERNETES_SERVICE_PORT', '6443'],
        ],
      );
      // Its own projected flannel-windows token (in-cluster config), never the kubelet's kubeconfig.
      assert.equal(sets[0]?.spec.template.spec.serviceAccountName, 'flannel-windows');
      assert.ok(!flannel.args.some((a: string) => a.startsWith('--kubeconfig-file')));
      assert.ok(flannel.args.includes('--iface=$(NODE_IP)') && flannel.args.includes('--kube-subnet-mgr'));
      assert.ok(!flannel.args.some((a: string) => a.startsWith('--ip-masq')));
      assert.deepEqual(proxy.args, ['--config=C:\\k\\kube-proxy\\config.yaml']);
    });

    it(`${backend}: plain YAML that kubemix lint accepts for a mixed cluster`, async () => {
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

    it(`${backend}: no native flanneld or kube-proxy step, service or download`, () => {
      const names = win.map((t) => t.name);
      assert.ok(!names.includes('win-flanneld') && !names.includes('win-kube-proxy'), names.join(' '));
      assert.equal(names.includes('win-source-vip'), backend === 'vxlan');
      const order = [
        'win-kubeadm-join',
        'win-cni-config',
        'win-flannel-pod',
        ...(backend === 'vxlan' ? ['win-source-vip'] : []),
        'win-kube-proxy-config',
      ];
      // Each step waits for the one before it (the plan lists tasks by stage, not by chain).
      order.slice(1).forEach((name, i) => {
        const [prev, next] = [win.find((t) => t.name === order[i]), win.find((t) => t.name === name)];
        assert.ok(prev !== undefined && next?.after.includes(prev.id), `${name} after ${order[i] ?? ''}`);
      });
      // Defender's process exclusions still name them: the pods run the same executables on the host.
      const all = win
        .filter((t) => t.name !== 'win-defender-exclusions')
        .map((t) => `${t.check?.script ?? ''}${t.apply.script}`)
        .join('\n');
      assert.doesNotMatch(all, /New-Service -Name 'kube-proxy'|flanneld-service\.exe|winsw|kube-proxy\.exe/i);
      const winFiles = files.filter((f) => f.node === 'win-01');
      assert.ok(!winFiles.some((f) => f.remotePath.endsWith('flanneld-service.xml')));
      const boot = winFiles.find((f) => f.remotePath === 'C:\\k\\kubemix\\boot.ps1')?.content ?? '';
      assert.doesNotMatch(boot, /flanneld|kube-proxy/);
      // The order itself (stale subnet.env dropped, then the kubelet) is tested on the parsed script in boot.test.ts.
      assert.match(boot, /'start-kubelet' \{\n {6}Start-Service -Name 'kubelet'\n {4}\}/);
      // net-conf.json is on the node before the join lets the flannel pod start.
      assert.ok(
        win
          .find((t) => t.name === 'win-kubelet-service')
          ?.uploads.some((u) => u.artifact === 'win-01:C:\\etc\\kube-flannel\\net-conf.json'),
      );
    });

    it(`${backend}: every script parses and passes the rules`, () => {
      for (const t of win) {
        for (const c of [t.check, t.apply]) {
          if (c === null) continue;
          assert.deepEqual(parseErrors(c.script), [], t.id);
          assert.deepEqual(lintPowerShell(c.script), [], t.id);
        }
      }
    });
  }

  it('off by default, ignored (with a warning) without Windows nodes or with Calico (the operator runs calico-node-windows)', () => {
    const off = resolveModel(
      readSpec({
        kind: 'file',
        path: 'off.yaml',
        text: specText({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' }),
      }),
    );
    assert.ok(!assemblePlan(off).files.some((f) => f.remotePath.includes('hostprocess')));
    const linuxOnly = modelFor('vxlan', 'flannel', 'debian-13');
    assert.ok(linuxOnly.warnings.some((w) => w.code === 'windows.hostprocess-unused'));
    assert.ok(!assemblePlan(linuxOnly).files.some((f) => f.remotePath.includes('hostprocess')));
    const calico = modelFor('vxlan', 'calico', 'windows-2022');
    assert.ok(calico.warnings.some((w) => w.code === 'windows.hostprocess-unused'));
    assert.equal(calico.windowsHostProcess, undefined);
    assert.ok(!assemblePlan(calico).files.some((f) => f.remotePath.includes('hostprocess')));
  });
});
