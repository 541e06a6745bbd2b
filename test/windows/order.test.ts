// The first-join order of a Windows worker (containerd → kubelet service →
// kubeadm join → flanneld → CNI config → kube-proxy) lives in the task DAG; versions never get
// flags or gates they reject; run-time values never come from the plan.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemblePlan } from '../../src/plan/assemble.js';
import { assertNoForbidden } from '../../src/plan/tasks/windows.js';
import type { Plan, Task } from '../../src/plan/types.js';
import { HELPERS_PATH } from '../../src/render/windows/helpers.js';
import type { RenderedArtifact } from '../../src/render/types.js';
import { WIN, SOURCE_VIP_PLACEHOLDER } from '../../src/render/windows/paths.js';
import {
  CALICO_COMBOS,
  GOLDEN_COMBOS,
  HOSTPROCESS_COMBOS,
  WINDOWS_TASK_ORDER as ORDER,
  comboName,
  modelFor,
  type Combo,
} from './fixtures.js';
import { dotSourcedFiles } from './powershell.js';

/** True when `later` transitively depends on `earlier`. */
function dependsOn(tasks: readonly Task[], later: Task, earlier: Task): boolean {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const seen = new Set<string>();
  const stack = [...later.after];
  while (stack.length > 0) {
    const id = stack.pop() ?? '';
    if (id === earlier.id) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(byId.get(id)?.after ?? []));
  }
  return false;
}

function winTasks(c: Combo): { all: Task[]; win: Task[]; files: ReturnType<typeof assemblePlan>['files'] } {
  const { plan, files } = assemblePlan(modelFor(c));
  return { all: [...plan.tasks], win: plan.tasks.filter((t) => t.host === 'win-01'), files };
}

/**
 * What is wrong with the plan's dot-sourcing: a check that dot-sources (`--check` runs checks in
 * no order), a file no task on the host uploads, an apply that does not wait for the task that does.
 * Returns the problems and how many scripts dot-source.
 */
function dotSourceProblems(plan: Pick<Plan, 'tasks' | 'artifacts'>): { problems: string[]; count: number } {
  const all = [...plan.tasks];
  const byId = new Map(plan.artifacts.map((a) => [a.id, a]));
  const problems: string[] = [];
  let count = 0;
  for (const t of all.filter((x) => x.apply.shell === 'powershell'))
    for (const [part, command] of [
      ['check', t.check],
      ['apply', t.apply],
    ] as const)
      for (const path of dotSourcedFiles(command?.script ?? '')) {
        count += 1;
        if (part === 'check') problems.push(`${t.id}: its check dot-sources ${path}`);
        const placing = all.filter(
          (p) => p.host === t.host && p.uploads.some((u) => byId.get(u.artifact)?.remotePath === path),
        );
        if (placing.length === 0) problems.push(`${t.id} dot-sources ${path}, which no task on ${t.host} uploads`);
        else if (!placing.some((p) => p === t || dependsOn(all, t, p)))
          problems.push(`${t.id} dot-sources ${path} but does not wait for ${placing.map((p) => p.id).join(', ')}`);
      }
  return { problems, count };
}

describe('a script that dot-sources the helpers file runs after the task placing it', () => {
  for (const c of [...GOLDEN_COMBOS, ...CALICO_COMBOS, ...HOSTPROCESS_COMBOS]) {
    it(comboName(c), () => {
      const { problems, count } = dotSourceProblems(assemblePlan(modelFor(c)).plan);
      assert.deepEqual(problems, []);
      assert.ok(count >= 8, `only ${count} scripts dot-source the helpers file`);
    });
  }

  it('catches an apply that no longer waits for win-helpers, and a check that dot-sources', () => {
    const { plan } = assemblePlan(modelFor(GOLDEN_COMBOS[0] as Combo));
    const preflight = plan.tasks.find((t) => t.host === 'win-01' && t.name === 'win-preflight');
    assert.ok(preflight !== undefined && dotSourcedFiles(preflight.apply.script).length === 1);
    const cut = plan.tasks.map((t) => (t === preflight ? { ...t, after: [] } : t));
    // Every later step waited through win-preflight: they lose win-helpers too.
    assert.ok(
      dotSourceProblems({ ...plan, tasks: cut }).problems.includes(
        `${preflight.id} dot-sources ${HELPERS_PATH} but does not wait for task-prepare-cluster/win-01/win-helpers`,
      ),
    );
    const checked = plan.tasks.map((t) => (t === preflight ? { ...t, check: t.apply } : t));
    assert.deepEqual(dotSourceProblems({ ...plan, tasks: checked }).problems, [
      `${preflight.id}: its check dot-sources ${HELPERS_PATH}`,
    ]);
  });
});

describe('first-join order is enforced by the task DAG', () => {
  for (const c of GOLDEN_COMBOS) {
    it(comboName(c), () => {
      const { all, win: unordered } = winTasks(c);
      // The plan lists tasks by stage and id; the order a host runs them in is the DAG's.
      const win = [...unordered].sort(
        (a, b) =>
          unordered.filter((t) => dependsOn(all, a, t)).length - unordered.filter((t) => dependsOn(all, b, t)).length,
      );
      const expected = [...ORDER];
      assert.deepEqual(
        win.map((t) => t.name),
        expected,
      );
      for (let i = 1; i < win.length; i += 1) {
        const [a, b] = [win[i - 1], win[i]];
        assert.ok(a !== undefined && b !== undefined && dependsOn(all, b, a), `${b?.name} must wait for ${a?.name}`);
      }
    });
  }
  it('the reboot task is marked so the executor waits through it', () => {
    const { win } = winTasks(GOLDEN_COMBOS[0] as Combo);
    const reboot = win.find((t) => t.name === 'win-reboot');
    assert.match(reboot?.apply.script ?? '', /shutdown\.exe \/r/);
    assert.equal(reboot?.reboots, true);
    // The check is what tells a host back from its reboot from one still going down.
    assert.match(reboot?.check?.script ?? '', /RebootPending/);
    assert.ok(win.filter((t) => t.reboots === true).length === 1, 'only win-reboot reboots');
  });
});

describe('versions: no flag or gate a release rejects', () => {
  for (const c of [...GOLDEN_COMBOS, { k8s: '1.35', os: 'windows-2025', backend: 'vxlan' } as const]) {
    it(comboName(c), () => {
      const { win, files } = winTasks(c);
      const texts = [
        ...win.flatMap((t) => [t.apply.script, t.check?.script ?? '']),
        ...files.filter((f) => f.node === 'win-01').map((f) => f.content),
      ].join('\n');
      assert.ok(!/WinOverlay|WinDSR/.test(texts), 'WinOverlay/WinDSR are GA and locked since 1.34');
      if (c.k8s !== '1.34')
        assert.ok(!texts.includes('--pod-infra-container-image'), 'kubelet ≥ 1.35 refuses --pod-infra-container-image');
      const join = files.find((f) => f.remotePath === WIN.joinConfig)?.content ?? '';
      assert.match(join, /apiVersion: kubeadm\.k8s\.io\/v1beta4/);
      const config = files.find((f) => f.remotePath === WIN.containerdConfig)?.content ?? '';
      assert.match(config, /^version = 4$/m);
      assert.match(config, /sandbox = 'registry\.k8s\.io\/pause:3\.10\.2'/);
      if (c.k8s === '1.37') assert.match(config, /unconfirmed upstream/);
    });
  }
});

describe('run-time values stay out of the plan', () => {
  for (const c of GOLDEN_COMBOS) {
    it(comboName(c), () => {
      const { win, files } = winTasks(c);
      const model = modelFor(c);
      const podCidr = model.nodes.find((n) => n.name === 'win-01')?.podCidr?.cidr ?? '';
      assert.notEqual(podCidr, '');
      const texts = [
        ...win.flatMap((t) => [t.apply.script, t.check?.script ?? '']),
        ...files.filter((f) => f.node === 'win-01').map((f) => f.content),
      ];
      for (const t of texts) assert.ok(!t.includes(podCidr), `the predicted pod CIDR ${podCidr} leaked into the plan`);
      const template = files.find((f) => f.remotePath === WIN.kubeProxyConfigTemplate)?.content ?? '';
      const vip = /sourceVip: '([^']*)'/.exec(template)?.[1];
      if (c.backend === 'vxlan') {
        assert.equal(vip, SOURCE_VIP_PLACEHOLDER, 'the source VIP is reserved on the node, not predicted');
        // Reserved by the kube-proxy pod's launcher at every start, in the network's subnet of the day.
        const launcher =
          files.find((f) => f.node === 'win-01' && f.remotePath === WIN.kubeProxyLauncher)?.content ?? '';
        assert.match(launcher, /host-local\.exe/);
        assert.match(launcher, /CNI_COMMAND = 'ADD'/);
        assert.match(launcher, /Test-KubemixInSubnet -Ip \$kept -Cidr \$subnet/);
      } else {
        assert.equal(vip, undefined);
      }
    });
  }
  it('secrets are references with names the tasks declare; no ServiceAccount token reaches a Windows node', () => {
    const { win, files } = winTasks(GOLDEN_COMBOS[0] as Combo);
    const join = win.find((t) => t.name === 'win-kubeadm-join');
    assert.deepEqual(join?.secrets, ['cluster-ca-cert-hash', 'kubeadm-token']);
    // Install media lie on the hypervisor and name their own secrets (unattend.test.ts).
    const refs = files
      .filter((f) => f.node === 'win-01')
      .flatMap((f) => [...f.content.matchAll(/\{\{secret:([a-z0-9-]+)\}\}/g)].map((m) => m[1]));
    assert.deepEqual([...new Set(refs)].sort(), ['cluster-ca-cert', 'cluster-ca-cert-hash', 'kubeadm-token']);
    // flanneld and kube-proxy get theirs from the kubelet, in their pods: none is minted, stored or placed.
    const scripts = win.flatMap((t) => [t.apply.script, t.check?.script ?? '']).join('\n');
    assert.doesNotMatch(scripts, /\{\{secret:(kube-proxy|flannel)-windows-token\}\}|create token/);
    assert.deepEqual(
      win.flatMap((t) => t.secrets).filter((s) => /token/.test(s)),
      ['kubeadm-token'],
    );
  });
  it('the services registry is trusted through the cluster CA, written 0600 beside its hosts.toml by the containerd step', () => {
    const { win, files } = winTasks(GOLDEN_COMBOS[0] as Combo);
    const dir = 'C:\\ProgramData\\containerd\\certs.d\\registry.k8scluster.kubeinit.local_5000_';
    const ca = files.find((f) => f.node === 'win-01' && f.remotePath === `${dir}\\ca.crt`);
    assert.equal(ca?.content, '{{secret:cluster-ca-cert}}\n');
    assert.equal(ca?.mode, '0600');
    const hosts = files.find((f) => f.node === 'win-01' && f.remotePath === `${dir}\\hosts.toml`)?.content ?? '';
    assert.match(
      hosts,
      /\[host\."https:\/\/registry\.k8scluster\.kubeinit\.local:5000"\]\n {2}capabilities = \["pull", "resolve"\]\n {2}ca = 'C:\\ProgramData\\containerd\\certs\.d\\registry\.k8scluster\.kubeinit\.local_5000_\\ca\.crt'/,
    );
    const step = win.find((t) => t.name === 'win-containerd');
    assert.ok(step?.uploads.some((u) => u.artifact === `win-01:${dir}\\ca.crt`));
    assert.ok(step?.secrets.includes('cluster-ca-cert'));
  });
  it('the join patches the kubelet config with the Windows taint and checks kubeadm-flags.env', () => {
    const { win, files } = winTasks(GOLDEN_COMBOS[0] as Combo);
    const patch = files.find((f) => f.remotePath === WIN.kubeletPatch)?.content ?? '';
    assert.match(patch, /registerWithTaints:\n {2}- key: 'os'\n {4}value: 'windows'\n {4}effect: 'NoSchedule'/);
    const join = files.find((f) => f.remotePath === WIN.joinConfig)?.content ?? '';
    assert.match(join, /patches:\n {2}directory: 'C:\\etc\\kubemix\\kubeadm-patches'/);
    assert.match(join, /taints: \[\]/);
    assert.match(win.find((t) => t.name === 'win-kubeadm-join')?.apply.script ?? '', /kubeadm-flags\.env/);
  });
});

describe('versions: the planner refuses a rejected flag or gate in any Windows text', () => {
  const model = modelFor({ k8s: '1.35', os: 'windows-2025', backend: 'vxlan' });
  const file = (content: string): RenderedArtifact => ({
    node: 'win-01',
    remotePath: 'C:\\k\\x',
    mode: '0644',
    owner: 'Administrators',
    content,
  });
  const withScript = (script: string, onCheck: boolean): Task => {
    const t = winTasks({ k8s: '1.35', os: 'windows-2025', backend: 'vxlan' }).win[0];
    assert.ok(t !== undefined);
    const command = { shell: 'powershell' as const, privilege: 'root' as const, script };
    return onCheck ? { ...t, check: command } : { ...t, apply: command };
  };
  it('in a file, an apply or a check, each word of the list', () => {
    for (const word of ['WinOverlay', 'WinDSR', '--pod-infra-container-image']) {
      const rejects = new RegExp(`contains ${word}, which it rejects`);
      assert.throws(() => assertNoForbidden(model, [file(`a\n${word}=true\n`)], []), rejects);
      assert.throws(() => assertNoForbidden(model, [], [withScript(`& x ${word}\n`, false)]), rejects);
      assert.throws(() => assertNoForbidden(model, [], [withScript(`& x ${word}\n`, true)]), rejects);
    }
    assert.doesNotThrow(() => assertNoForbidden(model, [file('WinOverla y\n')], [withScript('WinDS\n', true)]));
  });
});
