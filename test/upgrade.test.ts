// kubemix upgrade: the skew decision (pure), the plan's order and waves, and
// the executor trace of 1.35 → 1.36 on the mixed examples (golden), resumed
// after --stop-after without re-running a finished node.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CALICO } from '../src/matrix/index.js';
import { GUARD_SPEC_PATH } from '../src/plan/upgrade/addons.js';
import { InputError } from '../src/errors.js';
import { renderInstall } from '../src/guard/install.js';
import { KUBERNETES } from '../src/matrix/index.js';
import { decideUpgrade, MATRIX, type UpgradeRequest } from '../src/plan/upgrade/skew.js';
import type { Plan } from '../src/plan/types.js';
import { assertGolden } from './helpers/golden.js';
import { Positions } from './trace/positions.js';
import { renderTrace } from './trace/render-trace.js';
import { examplePlan, traceExample } from './trace/run-trace.js';
import { modelFor } from './helpers/shapes.js';
import { assembleUpgradePlan } from '../src/plan/upgrade/assemble.js';

const base: UpgradeRequest = {
  current: '1.35.6',
  to: '1.36',
  containerd: '2.3.2',
  nodes: [{ name: 'compute-01', os: 'windows-2022', osFamily: 'windows' }],
};

function refusal(req: UpgradeRequest, matrix = MATRIX): InputError {
  try {
    decideUpgrade(req, matrix);
  } catch (error) {
    assert.ok(error instanceof InputError, String(error));
    assert.equal(error.exit, 2);
    return error;
  }
  return assert.fail(`${req.current} → ${req.to} was allowed`);
}

describe('upgrade skew policy', () => {
  it('allows the next minor and resolves the matrix patch', () => {
    assert.deepEqual(decideUpgrade(base), { from: '1.35.6', to: '1.36.3', specVersion: '1.36', upToDate: false });
    assert.equal(decideUpgrade({ ...base, to: '1.36.1' }).to, '1.36.1');
    assert.equal(decideUpgrade({ ...base, current: '1.35.2', to: '1.35.6' }).to, '1.35.6');
  });
  it('the same version is up to date: nothing to plan', () => {
    assert.equal(decideUpgrade({ ...base, current: '1.36.3', to: '1.36' }).upToDate, true);
  });
  it('refuses skipping a minor, naming the next one', () => {
    const e = refusal({ ...base, current: '1.34.9', to: '1.36' });
    assert.match(e.message, /skips 1 minor/);
    assert.match(e.hint ?? '', /--to 1\.35/);
    assert.equal(e.path, '--to');
  });
  it('refuses a downgrade (kubelets would be newer than the API server)', () => {
    assert.match(refusal({ ...base, current: '1.36.2', to: '1.35' }).message, /newer than the API server/);
  });
  it('refuses a second target while an upgrade is unfinished', () => {
    const e = refusal({ ...base, current: '1.35.6', to: '1.36.1', inProgress: '1.36.3' });
    assert.match(e.message, /kubelet must never be newer than the API server/);
  });
  it('refuses a containerd line the target does not support, and a minor without containerd support', () => {
    assert.match(refusal({ ...base, containerd: '2.1.4' }).message, /supports containerd 2\.2, 2\.3, not 2\.1\.4/);
    assert.match(refusal({ ...base, current: '1.36.2', to: '1.37' }).message, /no confirmed containerd support/);
  });
  it('refuses a Windows build the target drops', () => {
    const matrix = { kubernetes: KUBERNETES, windows: { ...MATRIX.windows, '1.36': ['windows-2025'] } };
    assert.match(refusal(base, matrix).message, /does not support windows-2022, which node compute-01 runs/);
  });
  it('refuses unknown versions and malformed --to', () => {
    assert.equal(refusal({ ...base, to: '1.99' }).code, 'upgrade.skew');
    assert.equal(refusal({ ...base, to: 'latest' }).code, 'flags.to');
  });
});

/**
 * The steps that run on the node itself for its own upgrade (the first control plane also runs every node's
 * API steps and the add-ons; every host also probes towards each other node once that one is upgraded).
 */
const API_STEP = /^upgrade-(cordon|drain|ready|uncordon|verify)-|^upgrade-(addons|preflight|guard)$/;
const hostSteps = (plan: Plan, node: string): string[] =>
  plan.tasks
    .filter(
      (t) =>
        t.host === node && t.stage === 'task-deploy-cluster' && !API_STEP.test(t.name) && t.name !== 'upgrade-images',
    )
    .map((t) => t.id);

/** Every task reachable backwards from `id` through `after`. */
function ancestors(plan: Plan, id: string): Set<string> {
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));
  const seen = new Set<string>();
  const walk = (x: string): void => {
    for (const a of byId.get(x)?.after ?? []) {
      if (seen.has(a)) continue;
      seen.add(a);
      walk(a);
    }
  };
  walk(id);
  return seen;
}

interface Probe {
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

describe('upgrade plan of examples/k8s-libvirt-3-2-1.yaml (3 control planes, 2 Linux, 1 Windows)', () => {
  const { plan } = examplePlan('k8s-libvirt-3-2-1', 'upgrade');
  const nodes = (f: (n: Plan['nodes'][number]) => boolean): string[] => plan.nodes.filter(f).map((n) => n.name);
  const cps = nodes((n) => n.role === 'control-plane');
  const linux = nodes((n) => n.role === 'worker' && n.osFamily === 'linux');
  const windows = nodes((n) => n.osFamily === 'windows');
  const api = cps[0] ?? '';
  const id = (host: string, name: string): string => `task-deploy-cluster/${host}/${name}`;

  it('kubeadm upgrade apply on the first control plane only, upgrade node on the others', () => {
    assert.ok(
      plan.tasks.some(
        (t) => t.id === id(api, 'upgrade-apply') && /kubeadm upgrade apply 'v1\.36\.3' --yes/.test(t.apply.script),
      ),
    );
    for (const c of cps.slice(1))
      assert.ok(
        plan.tasks.some((t) => t.id === id(c, 'upgrade-node')),
        c,
      );
    assert.equal(plan.tasks.filter((t) => t.name === 'upgrade-apply').length, 1);
  });
  it('one node at a time: each cordon waits for the previous node’s uncordon; add-ons after the control planes', () => {
    const order = [...cps, ...linux, ...windows];
    for (let i = 1; i < order.length; i += 1) {
      const before = ancestors(plan, id(api, `upgrade-cordon-${order[i] ?? ''}`));
      assert.ok(before.has(id(api, `upgrade-uncordon-${order[i - 1] ?? ''}`)), `${order[i - 1]} before ${order[i]}`);
    }
    const addons = ancestors(plan, id(api, 'upgrade-addons'));
    for (const c of cps) assert.ok(addons.has(id(api, `upgrade-uncordon-${c}`)));
    assert.ok(ancestors(plan, id(api, `upgrade-cordon-${linux[0] ?? ''}`)).has(id(api, 'upgrade-addons')));
  });
  it('each node: cordon → drain → host steps → Ready → uncordon', () => {
    for (const n of [...cps, ...linux, ...windows]) {
      const uncordon = ancestors(plan, id(api, `upgrade-uncordon-${n}`));
      const host = hostSteps(plan, n);
      assert.ok(host.length >= 2, n);
      for (const h of host) {
        assert.ok(uncordon.has(h), `${h} before uncordon`);
        assert.ok(ancestors(plan, h).has(id(api, `upgrade-drain-${n}`)), `${h} after drain`);
      }
      assert.ok(ancestors(plan, id(api, `upgrade-drain-${n}`)).has(id(api, `upgrade-cordon-${n}`)));
    }
  });
  it('each control plane pulls kubeadm’s images after the skew preflight, waiting for no cordon; its own cordon waits for it', () => {
    const pulls = plan.tasks.filter((t) => t.name === 'upgrade-images');
    assert.deepEqual(pulls.map((t) => t.host).sort(), [...cps].sort(), 'control planes only');
    const cordons = plan.tasks.filter((t) => t.name.startsWith('upgrade-cordon-')).map((t) => t.id);
    for (const t of pulls) {
      const before = ancestors(plan, t.id);
      assert.ok(before.has(id(api, 'upgrade-preflight')), `${t.id} after the preflight`);
      assert.deepEqual(
        cordons.filter((c) => before.has(c)),
        [],
        `${t.id} before any cordon`,
      );
      assert.ok(ancestors(plan, id(api, `upgrade-cordon-${t.host}`)).has(t.id), `${t.host}'s cordon waits for it`);
      assert.match(t.apply.script, /crictl pull "\$image"/);
      for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'])
        assert.ok(t.apply.script.includes(`registry.k8s.io/${c}:v1.36.3`), c);
    }
  });
  it('drain respects PodDisruptionBudgets (no --disable-eviction, no --force) and reports what blocks', () => {
    const drain = plan.tasks.find((t) => t.name === `upgrade-drain-${linux[0] ?? ''}`) ?? assert.fail();
    assert.match(
      drain.apply.script,
      /kubectl --kubeconfig=\/etc\/kubernetes\/admin\.conf drain \S+ --ignore-daemonsets/,
    );
    assert.doesNotMatch(drain.apply.script, /--disable-eviction|--force/);
    assert.match(drain.apply.script, /disruptionsAllowed==0/);
  });
  it('Windows: containerd → kubelet restarted, then the flanneld and kube-proxy pods on the new binaries', () => {
    const t = plan.tasks.find((x) => x.host === windows[0] && x.name === 'win-upgrade-binaries') ?? assert.fail();
    const starts = [...t.apply.script.matchAll(/Start-Service -Name '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(starts, ['containerd', 'kubelet']);
    const stops = [...t.apply.script.matchAll(/Stop-KubemixService -Name '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(stops, ['kubelet', 'containerd']);
    // A running binary is moved aside, the new one copied in; ending the pods' processes restarts them on it.
    assert.match(t.apply.script, /Install-KubemixBinary -From \$file -To 'C:\\k\\bin\\kube-proxy\.exe'/);
    assert.ok(t.apply.script.indexOf("Start-Service -Name 'kubelet'") < t.apply.script.indexOf('Stop-Process -Force'));
    assert.match(t.apply.script, /foreach \(\$name in 'flanneld', 'kube-proxy'\)/);
    assert.ok(t.apply.script.indexOf('Stop-KubemixService') < t.apply.script.indexOf('Get-KubemixDownload -Name'));
    assert.match(t.apply.script, /\{\{sha256:windows\/kubelet\.exe\}\}/);
  });
  it('--max-unavailable 2 starts both Linux workers together, never a Windows worker before them', () => {
    const { plan: wide } = examplePlan('k8s-libvirt-3-2-1', 'upgrade', { maxUnavailable: 2 });
    const [a, b] = linux;
    assert.ok(!ancestors(wide, id(api, `upgrade-cordon-${b ?? ''}`)).has(id(api, `upgrade-uncordon-${a ?? ''}`)));
    const win = ancestors(wide, id(api, `upgrade-cordon-${windows[0] ?? ''}`));
    for (const l of linux) assert.ok(win.has(id(api, `upgrade-uncordon-${l}`)));
  });
  it('--stop-after plans up to that node; an unknown node is refused (exit 2)', () => {
    const { plan: part } = examplePlan('k8s-libvirt-3-2-1', 'upgrade', { stopAfter: linux[0] ?? '' });
    assert.ok(part.tasks.some((t) => t.name === `upgrade-uncordon-${linux[0] ?? ''}`));
    const own = (t: Plan['tasks'][number]) => !t.name.startsWith('upgrade-verify-');
    assert.ok(!part.tasks.some((t) => own(t) && (t.host === linux[1] || t.host === windows[0])));
    assert.throws(
      () => examplePlan('k8s-libvirt-3-2-1', 'upgrade', { stopAfter: 'nope' }),
      (e: unknown) => e instanceof InputError && e.path === '--stop-after',
    );
  });
});

describe('upgrade --max-unavailable 2 of Kubeinit k8s-libvirt-3-2-1 (two Linux workers, one wave)', () => {
  const model = modelFor('k8s-libvirt-3-2-1');
  const planWith = (maxUnavailable: number) =>
    assembleUpgradePlan(model, { from: model.versions.kubernetes, maxUnavailable }).plan;
  const api = model.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
  const [a = '', b = ''] = model.nodes.filter((n) => n.role === 'worker').map((n) => n.name);
  /** The scripts of `w`'s verify tasks: its own and its peers' towards it. */
  const verifyScripts = (plan: Plan, w: string): string =>
    plan.tasks
      .filter((t) => t.name === `upgrade-verify-${w}` || (t.host === w && t.name === 'upgrade-verify'))
      .map((t) => t.apply.script)
      .join('\n');

  it('no verify cell between two workers that may restart together; each still checks the control planes', () => {
    const wide = planWith(2);
    assert.ok(
      b !== '' &&
        !ancestors(wide, `task-deploy-cluster/${api}/upgrade-cordon-${b}`).has(
          `task-deploy-cluster/${api}/upgrade-uncordon-${a}`,
        ),
      'the two workers restart together',
    );
    for (const [w, peer] of [
      [a, b],
      [b, a],
    ] as const) {
      const scripts = verifyScripts(wide, w);
      assert.ok(!scripts.includes(`/${w}/${peer}`) && !scripts.includes(`/${peer}/${w}`), `${w} ↔ ${peer}`);
      assert.ok(scripts.includes(`underlay/ping/${w}/${api}`), `${w} still checks the control plane`);
    }
  });

  it('one at a time, the cells between the two workers stay', () => {
    const scripts = verifyScripts(planWith(1), a);
    assert.ok(scripts.includes(`underlay/ping/${a}/${b}`) && scripts.includes(`underlay/ping/${b}/${a}`));
  });
});

for (const example of ['k8s-libvirt-1-1-1', 'k8s-libvirt-3-2-1', 'calico-mixed'] as const) {
  describe(`upgrade trace 1.35 → 1.36 of examples/${example}.yaml`, () => {
    it('matches its golden trace; drains come before restarts on every node; no secret value', async () => {
      const trace = await traceExample(example, 'plan-order', 'upgrade');
      try {
        assertGolden(`traces/upgrade-${example}.txt`, renderTrace(trace));
        assert.equal(trace.result.counts.done, trace.plan.tasks.length);
        const at = new Positions(trace);
        for (const n of trace.plan.nodes.filter((x) => x.role !== 'services')) {
          const api = trace.plan.nodes.find((x) => x.role === 'control-plane')?.name ?? '';
          const drained = at.last(`task-deploy-cluster/${api}/upgrade-drain-${n.name}`);
          const steps = hostSteps(trace.plan, n.name);
          assert.ok(steps.length >= 2, n.name);
          for (const t of steps) assert.ok(at.first(t) > drained, `${t} after the drain of ${n.name}`);
        }
        assert.ok(!`${renderTrace(trace)}${JSON.stringify(trace.steps)}`.includes('FAKE-TEST-VALUE-'));
      } finally {
        rmSync(trace.stateDir, { recursive: true, force: true });
      }
    });
  });
}

describe('upgrade resumes after --stop-after without touching a finished node', () => {
  it('the full run re-runs none of the first run’s tasks', async () => {
    const first = await traceExample(
      'k8s-libvirt-3-2-1',
      'plan-order',
      'upgrade',
      undefined,
      examplePlan('k8s-libvirt-3-2-1', 'upgrade', { stopAfter: 'controller-02' }),
    );
    try {
      const rest = await traceExample('k8s-libvirt-3-2-1', 'plan-order', 'upgrade', first.stateDir);
      const again = new Set(rest.steps.map((s) => s.task));
      const finished = first.plan.tasks.filter((t) => t.host === 'controller-01' || t.name.endsWith('controller-01'));
      assert.ok(finished.length > 4);
      for (const t of finished) assert.ok(!again.has(t.id), `${t.id} ran again`);
      assert.ok(again.has('task-deploy-cluster/controller-03/upgrade-node'));
    } finally {
      rmSync(first.stateDir, { recursive: true, force: true });
    }
  });
});

describe('upgrade: the node part of verify, the guard webhook, Calico', () => {
  const { plan } = examplePlan('k8s-libvirt-3-2-1', 'upgrade');
  const api = plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
  const id = (host: string, name: string): string => `task-deploy-cluster/${host}/${name}`;
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));

  it("after Ready, the node's underlay cells run from every source host; uncordon waits for all of them", () => {
    for (const n of plan.nodes.filter((x) => x.role !== 'services')) {
      const verify = plan.tasks.filter(
        (t) => t.id === id(n.name, 'upgrade-verify') || t.name === `upgrade-verify-${n.name}`,
      );
      const sources = new Set(verify.map((t) => t.host));
      // Every other host probes towards the node (ICMP, MTU, its kubelet), and the node probes out.
      assert.deepEqual([...sources].sort(), plan.nodes.map((x) => x.name).sort(), n.name);
      for (const t of verify) assert.deepEqual(t.after, [id(api, `upgrade-ready-${n.name}`)], t.id);
      assert.deepEqual(byId.get(id(api, `upgrade-uncordon-${n.name}`))?.after, verify.map((t) => t.id).sort());
      const own = byId.get(id(n.name, 'upgrade-verify'))?.apply.script ?? '';
      assert.doesNotMatch(own, /underlay\/clock\//, 'clock cells need the deployer');
      for (const peer of plan.nodes.filter((x) => x !== n))
        assert.ok(own.includes(`underlay/ping/${n.name}/${peer.name}`));
      assert.ok(own.includes(`underlay/tcp-6443/${n.name}/`), 'the node reaches the API');
    }
    const towards = byId.get(id(api, `upgrade-verify-${plan.nodes.find((x) => x.osFamily === 'windows')?.name}`));
    assert.match(towards?.apply.script ?? '', /underlay\/tcp-10250\/\S+\/\S+: nothing answers on TCP 10250/);
  });

  it('the guard webhook, if installed, gets kubemix’s image and the upgraded spec after the add-ons', () => {
    const guard = byId.get(id(api, 'upgrade-guard')) ?? assert.fail('no upgrade-guard task');
    assert.deepEqual(guard.after, [id(api, 'upgrade-addons')]);
    assert.match(guard.apply.script, /set image deployment\/kubemix-guard guard='ghcr\.io\/kubemix\/kubemix:/);
    assert.match(guard.apply.script, /keeping the guard image \$image: not kubemix's own/);
    assert.match(guard.check?.script ?? '', /no guard webhook in the cluster: nothing to upgrade'; exit 0/);
    const spec = plan.artifacts.find((a) => a.remotePath === GUARD_SPEC_PATH) ?? assert.fail();
    assert.equal(spec.mode, '0600');
    assert.deepEqual(guard.uploads, [{ artifact: spec.id }]);
    // The first Linux worker's cordon waits for the guard, so the webhook is current before workers drain.
    const linux = plan.nodes.find((n) => n.role === 'worker' && n.osFamily === 'linux')?.name ?? '';
    assert.deepEqual(byId.get(id(api, `upgrade-cordon-${linux}`))?.after, [guard.id]);
  });

  it('the guard rollout may take what guard’s own Deployment allows: each replica in turn, its whole start-up', () => {
    const guard = byId.get(id(api, 'upgrade-guard')) ?? assert.fail('no upgrade-guard task');
    const deployment = renderInstall({
      namespace: 'kubemix-system',
      image: 'ghcr.io/kubemix/kubemix:0.1.0',
      caBundle: '',
      tls: { cert: '', key: '' },
      specText: undefined,
      specArg: 'cluster.yaml',
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      pullSecrets: false,
      insecureRegistries: [],
    }).find((d) => d['kind'] === 'Deployment') as {
      spec: {
        replicas: number;
        template: { spec: { containers: { startupProbe: Probe; readinessProbe: Probe }[] } };
      };
    };
    const c = deployment.spec.template.spec.containers[0] ?? assert.fail();
    const budget =
      deployment.spec.replicas *
      (c.startupProbe.periodSeconds * c.startupProbe.failureThreshold +
        c.readinessProbe.periodSeconds +
        c.readinessProbe.timeoutSeconds);
    const wait = Number(/rollout status deployment\/kubemix-guard --timeout=(\d+)s/.exec(guard.apply.script)?.[1]);
    assert.ok(wait >= budget, `rollout waits ${wait} s, guard's probes allow ${budget} s`);
    assert.ok(guard.timeoutSeconds > wait, `the task's ${guard.timeoutSeconds} s outlasts the rollout's ${wait} s`);
  });

  it("Linux-only Calico clusters: the Tigera operator at the matrix's version before the Installation", () => {
    const calico = examplePlan('calico-libvirt-1-1-1', 'upgrade').plan;
    const cp = calico.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
    const operator = calico.tasks.find((t) => t.id === id(cp, 'calico-operator')) ?? assert.fail('no calico-operator');
    assert.match(
      operator.apply.script,
      new RegExp(`calico/v${CALICO.version.replaceAll('.', '\\.')}/manifests/tigera-operator\\.yaml`),
    );
    assert.match(operator.check?.script ?? '', new RegExp(`= ${CALICO.version.replaceAll('.', '\\.')} \\]`));
    const addons = calico.tasks.find((t) => t.id === id(cp, 'upgrade-addons'));
    assert.deepEqual(addons?.after, [operator.id]);
    assert.ok(!plan.tasks.some((t) => t.name === 'calico-operator'), 'flannel clusters get no operator');
  });
});

describe('a single control plane with no Linux worker keeps CoreDNS while it is drained', () => {
  it('1-1-1 (one control plane, one Windows worker): its drain leaves kube-dns pods; 3-2-1 drains them', () => {
    const drainOf = (example: string) =>
      examplePlan(example, 'upgrade').plan.tasks.find((t) => t.name === 'upgrade-drain-controller-01')?.apply.script;
    assert.match(drainOf('k8s-libvirt-1-1-1') ?? '', /drain controller-01 .*--pod-selector='k8s-app!=kube-dns'/);
    assert.doesNotMatch(drainOf('k8s-libvirt-3-2-1') ?? '', /pod-selector/);
  });
});
