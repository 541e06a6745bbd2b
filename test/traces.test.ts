// Command traces of the bundled examples: the real executor (scheduler,
// journal, secret store, redaction) runs each plan against a recording target
// (test/trace/), because no kubeadm, kube-apiserver or Windows host exists
// here. The traces show what would run, in what order, with which secrets —
// as references only. Golden files: test/golden/traces/ (UPDATE_GOLDEN=1).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { secretRefs } from '../src/exec/secrets.js';
import { assertGolden } from './helpers/golden.js';
import { Positions } from './trace/positions.js';
import { renderTrace } from './trace/render-trace.js';
import { traceExample, type Trace } from './trace/run-trace.js';
import { CALICO_TASK_ORDER, WINDOWS_TASK_ORDER } from './windows/fixtures.js';

const EXAMPLES = [
  'k8s-libvirt-1-1-1',
  'k8s-libvirt-3-0-2',
  'k8s-libvirt-3-2-1',
  'calico-libvirt-1-1-1',
  'calico-mixed',
  'existing-host-gw',
] as const;
/** The examples with a Windows worker (the others get no Windows test). */
const WITH_WINDOWS: ReadonlySet<string> = new Set([
  'k8s-libvirt-1-1-1',
  'k8s-libvirt-3-2-1',
  'existing-host-gw',
  'calico-mixed',
]);
const DEPLOY = 'task-deploy-cluster';
/** Every fake secret value starts so (test/trace/fake-secrets.ts). */
const FAKE = 'FAKE-TEST-VALUE-';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function joinTask(trace: Trace, node: string): string {
  const n = trace.plan.nodes.find((x) => x.name === node);
  return `${DEPLOY}/${node}/${n?.osFamily === 'windows' ? 'win-kubeadm-join' : 'kubeadm-join'}`;
}

function cluster(trace: Trace): { first: string; controllers: string[]; workers: string[]; windows: string[] } {
  const init = trace.plan.tasks.find((t) => t.name === 'kubeadm-init');
  assert.ok(init, `${trace.example}: no kubeadm-init task`);
  const names = (f: (n: Trace['plan']['nodes'][number]) => boolean): string[] =>
    trace.plan.nodes.filter(f).map((n) => n.name);
  return {
    first: init.host,
    controllers: names((n) => n.role === 'control-plane' && n.name !== init.host),
    workers: names((n) => n.role === 'worker'),
    windows: names((n) => n.role === 'worker' && n.osFamily === 'windows'),
  };
}

for (const example of EXAMPLES) {
  describe(`trace of examples/${example}.yaml`, () => {
    let trace: Trace;
    let at: Positions;
    // The same run with the other serialisation: an order claim that plan order
    // alone (not the DAG) makes true fails on this one.
    let both: [Trace, Positions][];
    before(async () => {
      trace = await traceExample(example);
      at = new Positions(trace);
      const reverse = await traceExample(example, 'last-first');
      both = [
        [trace, at],
        [reverse, new Positions(reverse)],
      ];
    });
    after(() => {
      for (const [t] of both) rmSync(t.stateDir, { recursive: true, force: true });
    });

    it('matches its golden trace', () => assertGolden(`traces/${example}.txt`, renderTrace(trace)));

    it("the executor ran every task once and sent exactly the plan's scripts and files", () => {
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      assert.deepEqual([...at.taskOrder()].sort(), trace.plan.tasks.map((t) => t.id).sort());
      // A task's commands are contiguous (the serial gate), so a task id never comes back later.
      const blocks = trace.steps.filter((s, i) => i === 0 || trace.steps[i - 1]?.task !== s.task).length;
      assert.equal(blocks, trace.plan.tasks.length);
      const off = trace.steps.filter((s) => !s.matchesPlan || s.kind === 'unknown');
      assert.deepEqual(
        off.map((s) => `${s.task} ${s.kind} ${s.path ?? ''}`),
        [],
      );
      for (const t of trace.plan.tasks) at.one(t.id, 'apply');
    });

    it('every upload lands at an absolute path, and the manifests where kubectl reads them', () => {
      const uploads = trace.steps.filter((s) => s.kind === 'upload');
      for (const u of uploads) assert.match(u.path ?? '', /^(\/|[A-Z]:\\)/, `${u.task} writes ${u.path ?? ''}`);
      const { first } = cluster(trace);
      const cni = `${DEPLOY}/${first}/cluster-manifests`;
      const read = [...(at.stepsOf(cni).find((s) => s.kind === 'apply')?.script ?? '').matchAll(/ -f (\S+)/g)].map(
        (m) => m[1],
      );
      assert.ok(read.length > 0);
      assert.deepEqual(
        read.sort(),
        at
          .stepsOf(cni)
          .filter((s) => s.kind === 'upload')
          .map((s) => s.path)
          .sort(),
      );
    });

    it('follows the DAG: no task starts before everything it comes after has finished', () => {
      for (const [tr, pos] of both)
        for (const t of tr.plan.tasks)
          for (const d of t.after)
            assert.ok(pos.last(d) < pos.first(t.id), `${tr.priority}: ${t.id} started before ${d} finished`);
    });

    it('secrets: filled into what hosts received, only references in the trace, journal, logs and events', () => {
      for (const s of trace.steps) {
        assert.equal(s.unfilledReference, false, `${s.task} ${s.kind}: a reference reached the host unfilled`);
        // Every reference in the plan's text arrived as its value, and nothing else did.
        assert.deepEqual(
          [...s.filled].sort(),
          [...new Set(secretRefs(s.references.join('\n')))].sort(),
          `${s.task} ${s.kind}`,
        );
      }
      const texts = [
        renderTrace(trace),
        JSON.stringify(trace.steps),
        trace.events.serialise(),
        ...filesUnder(trace.stateDir)
          .filter((f) => !f.endsWith('secrets.json'))
          .map((f) => readFileSync(f, 'utf8')),
      ];
      for (const text of texts)
        assert.ok(
          !text.includes(FAKE),
          `a secret value leaked: …${text.slice(text.indexOf(FAKE) - 80, text.indexOf(FAKE) + 60)}…`,
        );
      // The scan means something: values did flow, into the store and to hosts.
      const store = readFileSync(join(trace.stateDir, 'secrets.json'), 'utf8');
      assert.ok(store.includes(`${FAKE}admin-kubeconfig-END`), 'captured admin.conf stored');
      assert.ok(trace.steps.some((s) => s.filled.includes('kubeadm-token')));
    });

    it('a Windows VM: media placed 0600 only by its guest task; ejected and deleted only after SSH answered', (t) => {
      const vms = trace.plan.nodes.filter((n) => n.osFamily === 'windows' && n.hypervisor !== undefined);
      if (vms.length === 0) return t.skip('no Windows VM');
      for (const [tr, pos] of both)
        for (const n of vms) {
          const net = (name: string) =>
            tr.plan.tasks.find((x) => x.stage === 'task-create-network' && x.name === `${name}-${n.name}`)?.id ??
            assert.fail(`${name}-${n.name}`);
          const placed = tr.steps.filter((s) => s.kind === 'upload' && /\/unattend\//.test(s.path ?? ''));
          const mine = placed.filter((s) => s.path?.includes(`/${n.fqdn}/unattend/`));
          assert.equal(mine.length, 3, `${n.name}: Autounattend.xml and the two first-boot files`);
          for (const s of mine) {
            assert.equal(s.task, net('guest'), `${s.path ?? ''} is placed by the guest task`);
            assert.equal(s.mode, '0600', s.path);
          }
          const filled = mine.flatMap((s) => s.filled);
          for (const name of ['windows-admin-password', 'cluster-ssh-public-key', `ssh-host-key-${n.name}`])
            assert.ok(filled.includes(name), `${n.name}'s media received ${name}`);
          // The guest task places them between its check and its apply, which deletes them when it ends.
          const guest = pos.stepsOf(net('guest'));
          assert.ok(guest.findIndex((s) => s.kind === 'upload') > guest.findIndex((s) => s.kind === 'check'));
          assert.match(guest.find((s) => s.kind === 'apply')?.script ?? '', /trap 'rm -rf -- "\$g\/unattend"' EXIT/);
          // Setup, then SSH with the pinned key, then — never before — the eject.
          assert.ok(pos.last(net('guest')) < pos.first(net('setup')));
          assert.ok(pos.last(net('setup')) < pos.first(net('ssh')));
          const eject = pos.one(net('eject'), 'apply');
          assert.ok(pos.last(net('ssh')) < eject, `${tr.priority}: ${n.name}'s media ejected after SSH answered`);
          assert.match(tr.steps[eject]?.script ?? '', /change-media --domain "\$d" --path sdb --eject/);
          const ejecting = tr.steps.filter((s) => s.kind === 'apply' && /change-media|vol-delete/.test(s.script ?? ''));
          assert.deepEqual(
            ejecting.map((s) => s.task).filter((id) => id.endsWith(`-${n.name}`)),
            [net('eject')],
          );
        }
    });

    it('kubeadm init on the first controller before any join; CNI manifests after init and before worker joins', () => {
      for (const [tr, pos] of both) {
        const { first, controllers, workers } = cluster(tr);
        const init = pos.one(`${DEPLOY}/${first}/kubeadm-init`, 'apply');
        const cni = pos.one(`${DEPLOY}/${first}/cluster-manifests`, 'apply');
        assert.ok(init < cni, `${tr.priority}: manifests applied after init`);
        if (tr.plan.cluster.cni.plugin === 'calico')
          assert.ok(
            init < pos.first(`${DEPLOY}/${first}/calico-operator`) &&
              pos.last(`${DEPLOY}/${first}/calico-operator`) < pos.first(`${DEPLOY}/${first}/cluster-manifests`),
          );
        for (const c of controllers)
          assert.ok(init < pos.first(joinTask(tr, c)), `${tr.priority}: ${c} joins after init`);
        for (const w of workers)
          assert.ok(cni < pos.first(joinTask(tr, w)), `${tr.priority}: ${w} joins after the CNI`);
        assert.ok(controllers.length + workers.length > 0);
      }
    });

    it('joins carry the bootstrap token and CA hash (controllers: the certificate key) as references', () => {
      const { controllers, workers } = cluster(trace);
      for (const node of [...controllers, ...workers]) {
        const steps = at.stepsOf(joinTask(trace, node));
        const refs = steps.flatMap((s) => s.references).join('\n');
        const wanted = [
          'kubeadm-token',
          'cluster-ca-cert-hash',
          ...(controllers.includes(node) ? ['kubeadm-certificate-key'] : []),
        ];
        for (const name of wanted) {
          assert.ok(refs.includes(`{{secret:${name}}}`), `${node} join refers to ${name}`);
          assert.ok(
            steps.some((s) => s.filled.includes(name)),
            `${node} received ${name}'s value`,
          );
        }
      }
    });

    it("every node binary comes from the services node's cache, checked by its hash; the deployer fetched each file once", () => {
      const svc = trace.plan.nodes.find((n) => n.role === 'services');
      assert.ok(svc, `${example} has a services node`);
      const fetchLines = trace.steps
        .filter((s) => s.kind === 'apply')
        .flatMap((s) =>
          (s.script ?? '')
            .split('\n')
            .filter((l) => /\{\{sha256:[^}]+\}\}/.test(l) && /https?:\/\//.test(l))
            .map((l) => ({ task: s.task, l })),
        );
      assert.ok(fetchLines.length > 0);
      for (const { task, l } of fetchLines)
        assert.match(
          l,
          new RegExp(`'https://${svc.ip.replace(/\./g, '\\.')}:8443/sha256/\\{\\{sha256:[^}]+\\}\\}'`),
          `${task}: ${l}`,
        );
      const ids = (trace.plan.downloads ?? []).map((d) => d.id);
      assert.deepEqual(
        [...trace.fetched].sort(),
        [...ids].sort(),
        'each download fetched exactly once, however many nodes need it',
      );
      const cached = trace.steps.filter((s) => s.kind === 'cache-upload');
      assert.deepEqual(cached.map((s) => s.download).sort(), [...ids].sort());
      assert.ok(cached.every((s) => s.host === svc.name && s.matchesPlan));
    });

    it("a second up downloads nothing; with a fresh journal the deployer's cache still fetches nothing", async () => {
      const again = await traceExample(example, 'plan-order', 'up', trace.stateDir);
      assert.deepEqual(again.fetched, []);
      assert.deepEqual(
        again.steps.filter((s) => s.kind === 'cache-upload' || s.kind === 'apply'),
        [],
      );
      assert.deepEqual(
        again.events.events.filter((e) => e.type === 'download'),
        [],
      );
      rmSync(join(trace.stateDir, 'journal.json'));
      const fresh = await traceExample(example, 'plan-order', 'up', trace.stateDir);
      assert.deepEqual(fresh.fetched, []);
      const actions = new Set(fresh.events.events.flatMap((e) => (e.type === 'download' ? [e.action] : [])));
      assert.deepEqual([...actions].sort(), ['cached', 'uploaded']);
    });

    it('post-deployment tasks come last', () => {
      // In plan-order serialisation only: the DAG does not make linux-only-addons and
      // label-workers wait for a Windows join, so in the other order they may run earlier.
      const post = trace.plan.tasks.filter((t) => t.stage === 'task-post-deployment').map((t) => at.first(t.id));
      const rest = trace.plan.tasks.filter((t) => t.stage !== 'task-post-deployment').map((t) => at.last(t.id));
      assert.ok(post.length > 0);
      assert.ok(Math.min(...post) > Math.max(...rest));
    });

    if (WITH_WINDOWS.has(example))
      it('Windows workers: the first-join order; kube-proxy and flanneld need no token from the controller', () => {
        assert.ok(cluster(trace).windows.length > 0, `${example} has a Windows worker`);
        for (const [tr, pos] of both) {
          const { windows } = cluster(tr);
          const order: readonly string[] =
            tr.plan.cluster.cni.plugin === 'calico' ? CALICO_TASK_ORDER : WINDOWS_TASK_ORDER;
          for (const w of windows) {
            const names = pos
              .taskOrder()
              .filter((id) => id.split('/')[1] === w)
              .map((id) => id.split('/')[2]);
            assert.deepEqual(
              names.filter((n) => n?.startsWith('win-')),
              [...order],
              tr.priority,
            );
            // Their pods' tokens come from the kubelet: nothing of the sort is captured or filled in.
            for (const s of pos.stepsOf(`${DEPLOY}/${w}/win-kube-proxy-pod`))
              assert.ok(!s.filled.some((f) => /windows-token/.test(f)));
          }
          assert.ok(!tr.steps.some((s) => s.kind === 'capture' && /windows-token/.test(s.task)));
        }
      });
  });
}

describe('trace of examples/calico-mixed.yaml: the order Calico on Windows needs', () => {
  let both: [Trace, Positions][];
  before(async () => {
    const [a, b] = [await traceExample('calico-mixed'), await traceExample('calico-mixed', 'last-first')];
    both = [
      [a, new Positions(a)],
      [b, new Positions(b)],
    ];
  });
  after(() => {
    for (const [t] of both) rmSync(t.stateDir, { recursive: true, force: true });
  });
  it('operator and Installation after init; Windows join after the Linux side is Ready; calico-node-windows and kube-proxy Ready before post-deployment', () => {
    for (const [tr, pos] of both) {
      const { first, workers, windows } = cluster(tr);
      const at = (name: string, host = first): number => pos.first(`${DEPLOY}/${host}/${name}`);
      const done = (name: string, host = first): number => pos.last(`${DEPLOY}/${host}/${name}`);
      assert.ok(done('kubeadm-init') < at('calico-operator'), tr.priority);
      assert.ok(done('calico-operator') < at('cluster-manifests'), tr.priority);
      const linux = workers.filter((w) => !windows.includes(w));
      for (const l of linux) assert.ok(done('kubeadm-join', l) < at('calico-linux-ready'), `${tr.priority}: ${l}`);
      for (const w of windows) {
        assert.ok(
          done('calico-linux-ready') < at('win-kubeadm-join', w),
          `${tr.priority}: ${w} joins after Linux Ready`,
        );
        assert.ok(done('win-kubeadm-join', w) < at('win-calico-node', w));
        assert.ok(done('win-kube-proxy-pod', w) < at('calico-windows-ready'), `${tr.priority}: ${w}`);
      }
      const ready = at('calico-windows-ready');
      assert.match(
        pos.stepsOf(`${DEPLOY}/${first}/calico-windows-ready`).find((s) => s.kind === 'apply')?.script ?? '',
        /calico-system rollout status daemonset\/calico-node-windows/,
      );
      for (const t of tr.plan.tasks.filter((x) => x.name === 'linux-only-addons'))
        assert.ok(pos.last(`${DEPLOY}/${first}/calico-windows-ready`) < pos.first(t.id) && ready < pos.first(t.id));
    }
  });
});

describe('traces are deterministic', () => {
  it('the same example traces to the same text twice', async () => {
    const [a, b] = [await traceExample('k8s-libvirt-3-2-1'), await traceExample('k8s-libvirt-3-2-1')];
    for (const t of [a, b]) rmSync(t.stateDir, { recursive: true, force: true });
    assert.equal(renderTrace(a), renderTrace(b));
  });
});
