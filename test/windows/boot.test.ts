// After a reboot: the boot script's decisions, read back from the rendered
// PowerShell by the tree-sitter grammar (not from the TS table), run against
// simulated boots — the API down for 10 minutes, a stale subnet.env, the HNS
// networks missing — with the script's own back-off. No Windows host exists
// here: this is the static and simulated part; the services' restart on
// failure is checked as the commands that set it.
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
import { flanneldServiceXml } from '../../src/render/windows/services.js';
import { hostFiles, modelFor, type Combo } from './fixtures.js';
import { decisionBranches, nodesOfType, parseErrors, withDotSourcedInline, type DecisionBranch } from './powershell.js';

const NATIVE: Combo = { k8s: '1.36', os: 'windows-2022', backend: 'vxlan' };
const HOSTPROCESS: Combo = { ...NATIVE, hostProcess: true };

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
  flannelNetwork: boolean;
  flanneld: boolean;
  kubelet: boolean;
  kubeProxy: boolean;
  apiUpAt: number;
  /** Seconds flanneld needs to write subnet.env and create its network once the API answers. */
  flannelTakes: number;
  flanneldStartedAt?: number;
  /** flanneld dies at this time, once (its network not made yet). */
  flanneldCrashesAt?: number;
}

function facts(w: World): BootFacts {
  if (w.flanneldCrashesAt !== undefined && w.t >= w.flanneldCrashesAt && w.flanneld) {
    w.flanneld = false;
    delete w.flanneldStartedAt;
    delete w.flanneldCrashesAt;
  }
  if (
    w.flanneld &&
    w.t >= w.apiUpAt &&
    w.flanneldStartedAt !== undefined &&
    w.t >= Math.max(w.apiUpAt, w.flanneldStartedAt) + w.flannelTakes
  ) {
    w.subnetEnv = 'fresh';
    w.flannelNetwork = true;
  }
  return {
    RuntimeRunning: w.runtime,
    ExternalNetwork: w.external,
    SubnetEnvStale: w.subnetEnv === 'stale',
    ApiAnswers: w.t >= w.apiUpAt,
    FlanneldRunning: w.flanneld,
    NetworkReady: w.subnetEnv === 'fresh' && w.flannelNetwork,
    KubeletRunning: w.kubelet,
    KubeProxyRunning: w.kubeProxy,
  };
}

/** The boot loop of boot.ps1: decide, act, back off on waits; returns the actions with their times. */
function simulate(branches: readonly DecisionBranch[], w: World, limit = 10_000): { action: string; t: number }[] {
  const log: { action: string; t: number }[] = [];
  let delay: number = BOOT_BACKOFF.firstSeconds;
  for (let i = 0; i < limit; i += 1) {
    const action = decide(branches, facts(w));
    log.push({ action, t: w.t });
    if (action === 'done') return log;
    if (action === 'start-runtime') w.runtime = true;
    if (action === 'create-external-network') w.external = true;
    if (action === 'drop-stale-subnet-env') w.subnetEnv = 'none';
    if (action === 'start-flanneld') {
      w.flanneld = true;
      w.flanneldStartedAt = w.t;
    }
    if (action === 'start-kubelet') w.kubelet = true;
    if (action === 'start-kube-proxy') w.kubeProxy = true;
    w.t += 1;
    if (action.startsWith('wait-')) {
      w.t += delay;
      delay = Math.min(delay * 2, BOOT_BACKOFF.maxSeconds);
    } else delay = BOOT_BACKOFF.firstSeconds;
  }
  throw new Error('the boot never finished');
}

const afterReboot = (over: Partial<World> = {}): World => ({
  t: 0,
  runtime: true,
  external: true,
  subnetEnv: 'stale',
  flannelNetwork: false,
  flanneld: false,
  kubelet: false,
  kubeProxy: false,
  apiUpAt: 0,
  flannelTakes: 20,
  ...over,
});
const order = (log: readonly { action: string }[]): string[] =>
  log.map((e) => e.action).filter((a, i, all) => a !== all[i - 1]);
const at = (log: readonly { action: string; t: number }[], action: string): number =>
  log.find((e) => e.action === action)?.t ?? NaN;

describe('boot.ps1 decisions, parsed from the script', () => {
  const native = decisionBranches(bootScriptOf(NATIVE), 'Get-KubemixBootAction');

  it('the script is the table: same branches, same order', () => {
    for (const [c, hp] of [
      [NATIVE, false],
      [HOSTPROCESS, true],
    ] as const) {
      const parsed = decisionBranches(bootScriptOf(c), 'Get-KubemixBootAction').map((b) => ({
        when: b.condition === undefined ? {} : parseCondition(b.condition),
        action: b.returns,
      }));
      assert.deepEqual(
        parsed,
        bootRules(hp).map((r) => ({ when: r.when, action: r.action })),
      );
    }
  });

  it('API down for 10 minutes: waits without giving up, then starts flanneld → kubelet → kube-proxy within a minute of the API', () => {
    const log = simulate(native, afterReboot({ apiUpAt: 600 }));
    assert.deepEqual(order(log), [
      'drop-stale-subnet-env',
      'wait-api',
      'start-flanneld',
      'wait-network',
      'start-kubelet',
      'start-kube-proxy',
      'done',
    ]);
    assert.ok(at(log, 'start-flanneld') >= 600 && at(log, 'start-flanneld') <= 600 + BOOT_BACKOFF.maxSeconds + 1);
    assert.ok(at(log, 'start-kubelet') > at(log, 'start-flanneld') + 20, 'the kubelet waits for the network');
  });

  it('API down for a day: still waiting, never a kubelet without the network, polls at most a minute apart', () => {
    const log = simulate(native, afterReboot({ apiUpAt: 86_400 }));
    const waits = log.filter((e) => e.action === 'wait-api');
    assert.ok(waits.length > 1000 / BOOT_BACKOFF.maxSeconds);
    waits.slice(1).forEach((e, i) => assert.ok(e.t - (waits[i]?.t ?? 0) <= BOOT_BACKOFF.maxSeconds + 1));
    assert.ok(at(log, 'start-kubelet') > 86_400);
  });

  it('stale subnet.env: dropped before flanneld starts; a fresh one with the network up goes straight to the kubelet', () => {
    const stale = simulate(native, afterReboot());
    assert.ok(at(stale, 'drop-stale-subnet-env') < at(stale, 'start-flanneld'));
    // The boot task restarted after the services already came up (a re-run): nothing is dropped or restarted.
    const fresh = simulate(
      native,
      afterReboot({ subnetEnv: 'fresh', flannelNetwork: true, flanneld: true, kubelet: true, kubeProxy: true }),
    );
    assert.deepEqual(order(fresh), ['done']);
  });

  it("HNS networks missing: External is made first; a fresh subnet.env without flannel's network is not ready", () => {
    const log = simulate(native, afterReboot({ external: false, subnetEnv: 'fresh', flannelNetwork: false }));
    assert.deepEqual(order(log).slice(0, 3), ['create-external-network', 'start-flanneld', 'wait-network']);
    assert.ok(at(log, 'start-kubelet') > at(log, 'start-flanneld'));
    const runtimeDown = simulate(native, afterReboot({ runtime: false }));
    assert.equal(order(runtimeDown)[0], 'start-runtime');
  });

  it('flanneld died before its network was ready (and its restart-on-failure gave up): started again, not waited on forever', () => {
    const log = simulate(native, afterReboot({ flanneldCrashesAt: 8 }));
    assert.equal(log.filter((e) => e.action === 'start-flanneld').length, 2);
    assert.equal(log.at(-1)?.action, 'done');
  });

  it('HostProcess: no API wait and no flanneld service; the kubelet starts after the stale subnet.env is gone', () => {
    const hp = decisionBranches(bootScriptOf(HOSTPROCESS), 'Get-KubemixBootAction');
    assert.deepEqual(order(simulate(hp, afterReboot({ apiUpAt: 600 }))), [
      'drop-stale-subnet-env',
      'start-kubelet',
      'done',
    ]);
  });
});

describe('boot.ps1 has no deadline and the services restart on failure', () => {
  for (const c of [NATIVE, HOSTPROCESS]) {
    it(c.hostProcess === true ? 'HostProcess' : 'native', () => {
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
      const { plan, files } = assemblePlan(modelFor(c));
      const apply = plan.tasks.find((t) => t.host === 'win-01' && t.name === 'win-boot-order')?.apply.script ?? '';
      // What runs: the apply with the helpers file it dot-sources.
      const order = withDotSourcedInline(apply, hostFiles(plan, files, 'win-01'));
      assert.match(order, /-ExecutionTimeLimit \(\[TimeSpan\]::Zero\)/);
      assert.match(order, /Set-KubemixRestart -Name \$name -Enabled \$true/);
      // The SCM repeats the last failure action for every later failure: restart with no count limit.
      assert.match(order, /actions= restart\/10000\/restart\/10000\/restart\/30000/);
    });
  }
  it("flanneld's WinSW wrapper restarts it on every failure", () => {
    const xml = flanneldServiceXml(
      modelFor(NATIVE).nodes.find((n) => n.osFamily === 'windows') ?? assert.fail('no Windows node'),
    );
    assert.match(xml, /<onfailure action="restart" delay="[^"]+"\/>\s*<\/?/);
    assert.ok(!/<onfailure action="none"/.test(xml));
  });
});
