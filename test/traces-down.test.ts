// Command traces of `kubemix down` (the reset plan) for the examples with a
// Windows worker (flannel and Calico): nodes reset on existing hosts, VMs
// removed whole on libvirt.
// The real executor against the recording target, because
// kubeadm reset, kubectl and Windows hosts do not exist here. Golden files:
// test/golden/traces/down-*.txt (UPDATE_GOLDEN=1).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { assertGolden } from './helpers/golden.js';
import { Positions } from './trace/positions.js';
import { renderTrace } from './trace/render-trace.js';
import { examplePlan, traceExample, type Trace } from './trace/run-trace.js';
import { CALICO_WINDOWS } from '../src/matrix/index.js';
import { WIN } from '../src/render/windows/paths.js';

const EXAMPLES = ['k8s-libvirt-1-1-1', 'k8s-libvirt-3-2-1', 'existing-host-gw', 'calico-existing'] as const;
const STAGE = 'task-cleanup-hypervisors';
const FAKE = 'FAKE-TEST-VALUE-';
/** Examples whose machines kubemix created: down removes them instead of resetting them. */
const CREATED = (example: string): boolean => example.startsWith('k8s-libvirt');

for (const example of EXAMPLES) {
  describe(`down trace of examples/${example}.yaml`, () => {
    let both: [Trace, Positions][];
    before(async () => {
      const trace = await traceExample(example, 'plan-order', 'down');
      const reverse = await traceExample(example, 'last-first', 'down');
      both = [
        [trace, new Positions(trace)],
        [reverse, new Positions(reverse)],
      ];
    });
    after(() => {
      for (const [t] of both) rmSync(t.stateDir, { recursive: true, force: true });
    });
    const nodes = (t: Trace, f: (n: Trace['plan']['nodes'][number]) => boolean): string[] =>
      t.plan.nodes.filter(f).map((n) => n.name);

    it('matches its golden trace; every task ran once', () => {
      const [trace, at] = both[0] ?? assert.fail();
      assertGolden(`traces/down-${example}.txt`, renderTrace(trace));
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      assert.deepEqual([...at.taskOrder()].sort(), trace.plan.tasks.map((t) => t.id).sort());
    });

    it('created machines are removed on each hypervisor, not reset', { skip: !CREATED(example) }, () => {
      for (const [tr] of both) {
        const hypervisors = tr.plan.hosts.filter((h) => h.provisioner === 'user').map((h) => h.name);
        assert.ok(hypervisors.length > 0);
        assert.deepEqual(
          tr.plan.tasks.map((t) => t.id).sort(),
          hypervisors.map((h) => `${STAGE}/${h}/remove-cluster`).sort(),
        );
      }
    });

    const existing = { skip: CREATED(example) };
    it(
      'Linux workers are reset before the controllers, and each Windows Node is deleted before its controller resets',
      existing,
      () => {
        for (const [tr, pos] of both) {
          const controllers = nodes(tr, (n) => n.role === 'control-plane');
          const linuxWorkers = nodes(tr, (n) => n.role === 'worker' && n.osFamily === 'linux');
          const deletes = tr.plan.tasks.filter((t) => t.name.startsWith('delete-node-'));
          assert.ok(deletes.length > 0, `${example}: a Windows worker's Node deletion is planned`);
          for (const c of controllers) {
            const reset = pos.first(`${STAGE}/${c}/node-reset`);
            for (const w of linuxWorkers)
              assert.ok(pos.last(`${STAGE}/${w}/node-reset`) < reset, `${tr.priority}: ${w} reset before ${c}`);
            for (const d of deletes) assert.ok(pos.last(d.id) < reset, `${tr.priority}: ${d.id} before ${c} resets`);
          }
        }
      },
    );

    it('the services node is cleaned up', existing, () => {
      const [trace] = both[0] ?? assert.fail();
      const services = nodes(trace, (n) => n.role === 'services');
      for (const s of services)
        assert.ok(
          trace.plan.tasks.some((t) => t.id === `${STAGE}/${s}/services-reset`),
          s,
        );
    });

    it(
      'a Calico Windows worker is reset from Calico’s state: its networks, CNI files, registry key',
      {
        skip: example !== 'calico-existing',
      },
      () => {
        for (const [tr, pos] of both) {
          const win = nodes(tr, (n) => n.osFamily === 'windows');
          assert.ok(win.length > 0);
          const { contents } = examplePlan(example, 'down');
          for (const w of win) {
            const steps = pos.stepsOf(`${STAGE}/${w}/win-reset`);
            const upload = steps.find((x) => x.kind === 'upload' && x.path === WIN.resetScript);
            assert.ok(upload, `${tr.priority}: ${w} receives ${WIN.resetScript}`);
            const script = contents.get(`${w}:${WIN.resetScript}`)?.toString('utf8') ?? '';
            assert.match(script, /@\('External', 'Calico'\) -contains \$_\.Name/);
            assert.ok(script.includes(`'${CALICO_WINDOWS.registryKey}'`));
            assert.ok(script.includes("'C:\\etc\\cni\\net.d\\10-calico.conflist'"));
            assert.ok(!script.includes('flanneld'), 'no flannel steps on a Calico node');
            assert.ok(
              pos.last(`${STAGE}/${w}/win-reset`) <
                pos.first(
                  `${STAGE}/${tr.plan.nodes.find((n) => n.role === 'control-plane')?.name ?? ''}/delete-node-${w}`,
                ),
            );
          }
        }
      },
    );

    it('nothing secret reaches a host as a value', () => {
      const [trace] = both[0] ?? assert.fail();
      const text = `${renderTrace(trace)}\n${JSON.stringify(trace.steps)}\n${trace.events.serialise()}`;
      assert.ok(!text.includes(FAKE), 'a fake secret value reached the trace');
    });
  });
}
