// After a reboot: the boot script's decisions, read back from the rendered
// PowerShell by the tree-sitter grammar (not from the TS table), run against
// simulated boots — a stale subnet.env, the HNS networks missing, containerd
// down, the kubelet dying — with the script's own back-off. flanneld and
// kube-proxy are pods the kubelet runs (and retries the API server for), so
// the script's part ends with the kubelet. No Windows host exists here: this
// is the static and simulated part; the kubelet's restart on failure is
// checked as the commands that set it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemblePlan } from '../../src/plan/assemble.js';
import {
  BOOT_BACKOFF,
  BOOT_FACTS,
  bootRules,
  type BootFact,
  type BootFacts,
} from '../../src/render/windows/boot-rules.js';
import { WIN } from '../../src/render/windows/paths.js';
import { hostFiles, modelFor, type Combo } from './fixtures.js';
import { decisionBranches, nodesOfType, parseErrors, withDotSourcedInline, type DecisionBranch } from './powershell.js';

const FLANNEL: Combo = { k8s: '1.36', os: 'windows-2022', backend: 'vxlan' };
const CALICO: Combo = { ...FLANNEL, calico: true };

function bootScriptOf(c: Combo): string {
  const { files } = assemblePlan(modelFor(c));
  const f = files.find((x) => x.node === 'win-01' && x.remotePath === WIN.bootScript);
  assert.ok(f);
  return f.content;
}

/** `(-not $f.X) -and $f.Y` → { X: false, Y: true }; anything else in a condition is an error. */
function parseCondition(text: string): Partial<Record<BootFact, boolean>> {
  const out: Partial<Record<BootFact, boolean>> = {};
  const rest = text.replace(
    /\(-not \$f\.(\w+)\)|\$f\.(\w+)/g,
    (_m, neg: string | undefined, pos: string | undefined) => {
      const fact = (neg ?? pos) as BootFact;
      assert.ok(BOOT_FACTS.includes(fact), `unknown fact ${fact}`);
      out[fact] = neg === undefined;
      return 'X';
    },
  );
  assert.match(rest, /^X( -and X)*$/, `condition ${text} is not a conjunction of facts`);
  return out;
}

/** The decision the script itself makes: first matching branch of its parsed Get-KubemixBootAction. */
function decide(branches: readonly DecisionBranch[], facts: BootFacts): string {
  for (const b of branches) {
    if (b.condition === undefined) return b.returns;
    if (Object.entries(parseCondition(b.condition)).every(([k, v]) => facts[k as BootFact] === v)) return b.returns;
  }
  throw new Error('no branch matched');
}

interface World {
  t: number;
  runtime: boolean;
  external: boolean;
  subnetEnv: 'none' | 'stale' | 'fresh';
  kubelet: boolean;
  /** The kubelet dies at this time, once (its restart-on-failure gave up). */
  kubeletCrashesAt?: number;
}

function facts(w: World): BootFacts {
  if (w.kubeletCrashesAt !== undefined && w.t >= w.kubeletCrashesAt && w.kubelet) {
    w.kubelet = false;
    delete w.kubeletCrashesAt;
  }
  return {
    RuntimeRunning: w.runtime,
    ExternalNetwork: w.external,
    SubnetEnvStale: w.subnetEnv === 'stale',
    KubeletRunning: w.kubelet,
  };
}

/** The boot loop of boot.ps1: decide, act, back off after an error; returns the actions with their times. */
function simulate(branches: readonly DecisionBranch[], w: World, limit = 10_000): { action: string; t: number }[] {
  const log: { action: string; t: number }[] = [];
  for (let i = 0; i < limit; i += 1) {
    const action = decide(branches, facts(w));
    log.push({ action, t: w.t });
    if (action === 'done') return log;
    if (action === 'start-runtime') w.runtime = true;
    if (action === 'create-external-network') w.external = true;
    if (action === 'drop-stale-subnet-env') w.subnetEnv = 'none';
    if (action === 'start-kubelet') w.kubelet = true;
    w.t += 1;
  }
  throw new Error('the boot never finished');
}

const afterReboot = (over: Partial<World> = {}): World => ({
  t: 0,
  runtime: true,
  external: true,
  subnetEnv: 'stale',
  kubelet: false,
  ...over,
});
const order = (log: readonly { action: string }[]): string[] =>
  log.map((e) => e.action).filter((a, i, all) => a !== all[i - 1]);

describe('boot.ps1 decisions, parsed from the script', () => {
  const flannel = decisionBranches(bootScriptOf(FLANNEL), 'Get-KubemixBootAction');
  const calico = decisionBranches(bootScriptOf(CALICO), 'Get-KubemixBootAction');

  it('the script is the table: same branches, same order', () => {
    for (const [c, cni] of [
      [FLANNEL, 'flannel'],
      [CALICO, 'calico'],
    ] as const) {
      const parsed = decisionBranches(bootScriptOf(c), 'Get-KubemixBootAction').map((b) => ({
        when: b.condition === undefined ? {} : parseCondition(b.condition),
        action: b.returns,
      }));
      assert.deepEqual(
        parsed,
        bootRules(cni).map((r) => ({ when: r.when, action: r.action })),
      );
    }
  });

  it('flannel: a stale subnet.env is dropped before the kubelet starts the flanneld pod; nothing waits for the API', () => {
    assert.deepEqual(order(simulate(flannel, afterReboot())), ['drop-stale-subnet-env', 'start-kubelet', 'done']);
    // The boot task restarted after the node already came up (a re-run): nothing is dropped or restarted.
    assert.deepEqual(order(simulate(flannel, afterReboot({ subnetEnv: 'fresh', kubelet: true }))), ['done']);
  });

  it('HNS External missing: made first, before the kubelet; containerd down: started first', () => {
    const log = simulate(flannel, afterReboot({ external: false }));
    assert.deepEqual(order(log), ['create-external-network', 'drop-stale-subnet-env', 'start-kubelet', 'done']);
    assert.equal(order(simulate(flannel, afterReboot({ runtime: false })))[0], 'start-runtime');
    assert.equal(order(simulate(calico, afterReboot({ runtime: false })))[0], 'start-runtime');
  });

  it('Calico: no External of ours and no subnet.env: containerd, then the kubelet (calico-node-windows and kube-proxy are its pods)', () => {
    assert.deepEqual(order(simulate(calico, afterReboot({ external: false }))), ['start-kubelet', 'done']);
  });

  it('the kubelet died on the way (its restart-on-failure gave up): started again', () => {
    const log = simulate(flannel, afterReboot({ kubeletCrashesAt: 2 }));
    assert.equal(log.filter((e) => e.action === 'start-kubelet').length, 2);
    assert.equal(log.at(-1)?.action, 'done');
  });
});

describe('boot.ps1 has no deadline and the kubelet restarts on failure', () => {
  for (const c of [FLANNEL, CALICO]) {
    it(c.calico === true ? 'Calico' : 'flannel', () => {
      const script = bootScriptOf(c);
      assert.deepEqual(parseErrors(script), []);
      assert.ok(!/deadline|AddSeconds/i.test(script), 'no time limit');
      assert.deepEqual(
        nodesOfType(script, 'flow_control_statement').filter((s) => /^(exit|throw)\b/.test(s) && !s.includes('HNS')),
        [],
        'nothing ends the loop but done',
      );
      assert.match(script, /while \(\$true\) \{\n {2}try \{/);
      assert.match(script, new RegExp(`\\$delay = \\[Math\\]::Min\\(\\$delay \\* 2, ${BOOT_BACKOFF.maxSeconds}\\)`));
      assert.doesNotMatch(script, /Start-Service -Name '(flanneld|kube-proxy)'/);
      const { plan, files } = assemblePlan(modelFor(c));
      const apply = plan.tasks.find((t) => t.host === 'win-01' && t.name === 'win-boot-order')?.apply.script ?? '';
      // What runs: the apply with the helpers file it dot-sources.
      const run = withDotSourcedInline(apply, hostFiles(plan, files, 'win-01'));
      assert.match(run, /-ExecutionTimeLimit \(\[TimeSpan\]::Zero\)/);
      assert.match(run, /Set-KubemixRestart -Name 'kubelet' -Enabled \$true/);
      // The SCM repeats the last failure action for every later failure: restart with no count limit.
      assert.match(run, /actions= restart\/10000\/restart\/10000\/restart\/30000/);
    });
  }
});
