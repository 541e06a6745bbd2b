// kubemix patch: Windows workers one at a time — the updates staged as SYSTEM
// before the cordon, cordon, drain, a pending reboot first, the install as
// SYSTEM with its reboot, Ready, the pod network back, uncordon — traced with
// the real executor (golden), stopping at the first node whose network does
// not come back and leaving it cordoned, uncordoning a node where nothing was
// installed; and the Windows Update scripts' rules (no WUA call in the SSH
// session: the remote-session rule).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HostError, InputError } from '../src/errors.js';
import { applyPlan } from '../src/exec/apply-plan.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePatchPlan } from '../src/plan/patch/assemble.js';
import { assemblePatchQueryPlan, parsePending, pendingText, PATCH_QUERY_TASK } from '../src/plan/patch/query.js';
import { rollbackCommands, rollbackText } from '../src/plan/patch/rollback.js';
import { patchNodes } from '../src/patch/run.js';
import { installUpdates, NOTHING_INSTALLED, stageUpdates } from '../src/render/windows/updates.js';
import { installLinuxUpdates, listLinuxPending } from '../src/render/linux/updates.js';
import { powershell } from '../src/plan/task.js';
import { readSpec } from '../src/spec/read.js';
import { assertGolden } from './helpers/golden.js';
import { repoPath, runCli } from './helpers/cli.js';
import { capturedNames, planSecretNames, seedSecrets } from './trace/fake-secrets.js';
import { Positions } from './trace/positions.js';
import { RecordingTarget } from './trace/recording-target.js';
import { renderTrace } from './trace/render-trace.js';
import { traceExample } from './trace/run-trace.js';
import { lintPowerShell, parseErrors, remoteSessionProblems } from './windows/powershell.js';

function example(name: string) {
  const text = readFileSync(repoPath('examples', `${name}.yaml`), 'utf8');
  return { model: resolveModel(readSpec({ kind: 'file', path: `${name}.yaml`, text })) };
}

describe('patch plan', () => {
  const { model } = example('k8s-libvirt-3-2-1');
  const win = model.nodes.filter((n) => n.osFamily === 'windows').map((n) => n.name);
  const api = model.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
  const plan = assemblePatchPlan(model, { kbs: [], securityOnly: false, maxUnavailable: 1 }).plan;

  it('only Windows workers; each: stage → cordon → drain → pending reboot → updates (reboots) → Ready → pod network → verify → uncordon', () => {
    assert.ok(win.length >= 1);
    for (const w of win) {
      const chain = plan.tasks.filter((t) => t.name.endsWith(`-${w}`) || t.host === w).map((t) => t.id.split('/')[2]);
      assert.deepEqual(
        [...new Set(chain)].sort(),
        [
          `patch-cordon-${w}`,
          `patch-drain-${w}`,
          `patch-ready-${w}`,
          `patch-uncordon-${w}`,
          `patch-verify-${w}`,
          'patch-verify',
          'win-pod-network',
          'win-reboot-pending',
          'win-updates',
          'win-updates-stage',
        ].sort(),
      );
      // The node's underlay cells run from every host once its pod network is back; uncordon waits for all.
      const network = `task-deploy-cluster/${w}/win-pod-network`;
      const verify = plan.tasks.filter(
        (t) => t.name === `patch-verify-${w}` || (t.host === w && t.name === 'patch-verify'),
      );
      assert.deepEqual(new Set(verify.map((t) => t.host)), new Set(model.nodes.map((n) => n.name)));
      for (const t of verify) assert.deepEqual(t.after, [network], t.id);
      const uncordon = plan.tasks.find((t) => t.name === `patch-uncordon-${w}`);
      assert.deepEqual(uncordon?.after, verify.map((t) => t.id).sort());
      const own = verify.find((t) => t.host === w)?.apply.script ?? '';
      assert.match(own, new RegExp(`underlay/ping/${w}/${api}`));
      assert.doesNotMatch(own, /underlay\/clock\//);
      const updates = plan.tasks.find((t) => t.host === w && t.name === 'win-updates') ?? assert.fail();
      assert.equal(updates.reboots, true);
      const reboot = plan.tasks.find((t) => t.host === w && t.name === 'win-reboot-pending') ?? assert.fail();
      assert.equal(reboot.reboots, true);
      assert.deepEqual(reboot.after, [`task-deploy-cluster/${api}/patch-drain-${w}`]);
      assert.deepEqual(updates.after, [reboot.id]);
      // Staged (searched and downloaded as SYSTEM) before the node is cordoned.
      const cordon = plan.tasks.find((t) => t.name === `patch-cordon-${w}`) ?? assert.fail();
      assert.deepEqual(cordon.after, [`task-deploy-cluster/${w}/win-updates-stage`]);
    }
    // On Linux hosts: the API steps on the first control plane, and each host's read-only probes towards the node.
    const linuxHost = (t: (typeof plan.tasks)[number]) =>
      model.nodes.find((n) => n.name === t.host)?.osFamily === 'linux' && t.host !== api;
    assert.deepEqual(
      plan.tasks.filter((t) => linuxHost(t) && !win.some((w) => t.name === `patch-verify-${w}`)).map((t) => t.id),
      [],
    );
  });
  it('--nodes must name Windows workers (exit 2); --kb is validated at the CLI', async () => {
    assert.throws(
      () => assemblePatchPlan(model, { nodes: [api], kbs: [], securityOnly: false, maxUnavailable: 1 }),
      (e: unknown) => e instanceof InputError && e.path === '--nodes',
    );
    const r = await runCli([
      'patch',
      repoPath('examples', 'k8s-libvirt-1-1-1.yaml'),
      '--kb',
      'latest',
      '--state-dir',
      join(tmpdir(), 'kubemix-never'),
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--kb "latest" is not a KB article number/);
  });
  it('the update scripts use the Windows Update Agent COM API as SYSTEM, no module, and honour --kb and --security-only', () => {
    const stage = stageUpdates({ kbs: ['KB5040437'], securityOnly: true });
    const install = installUpdates();
    for (const script of [stage.apply, install.apply, install.check ?? ''].map((x) => powershell(x).script)) {
      assert.deepEqual(parseErrors(script), []);
      assert.deepEqual(lintPowerShell(script), []);
    }
    assert.match(stage.apply, /New-Object -ComObject 'Microsoft\.Update\.Session'/);
    assert.doesNotMatch(stage.apply + install.apply, /Install-Module|PSWindowsUpdate/);
    assert.match(stage.apply, /\$wanted = @\('KB5040437'\)/);
    assert.match(stage.apply, /if \(\$true -and -not \$security\)/);
    assert.match(install.apply, /shutdown\.exe \/r/);
    // Every WUA call inside the worker of a SYSTEM scheduled task; the install's own failure before Install() says so.
    assert.match(install.apply, /New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount/);
    assert.match(install.apply, /Invoke-KubemixAsSystem -Name 'kubemix-patch-install' -TimeoutSeconds 5400 -Script @'/);
    assert.ok(install.apply.includes(NOTHING_INSTALLED));
  });

  it('the remote-session rule: WUA download/install/EULA, DPAPI user stores and shares fail in the SSH session', () => {
    const head = "$ErrorActionPreference = 'Stop'\n";
    // The script before issue 30 ran these in the session: put back, the rule fails it.
    const inline = `${head}$session = New-Object -ComObject 'Microsoft.Update.Session'
$updates = $session.CreateUpdateSearcher().Search("IsInstalled=0").Updates
foreach ($u in $updates) { $u.AcceptEula() }
$d = $session.CreateUpdateDownloader(); $d.Updates = $updates; [void]$d.Download()
$i = $session.CreateUpdateInstaller(); $i.Updates = $updates; [void]$i.Install()
`;
    assert.deepEqual(parseErrors(inline), []);
    const found = remoteSessionProblems(inline).join('\n');
    assert.match(found, /AcceptEula: a Windows Update Agent call refused to remote callers/);
    assert.match(found, /Microsoft\.Update\.Session: the Windows Update Agent API/);
    assert.ok(lintPowerShell(inline).length > 0);
    for (const bad of [
      '$p = Read-Host -AsSecureString\n$s = ConvertFrom-SecureString $p\n',
      '& cmdkey.exe /list\n',
      "Get-Credential | Export-Clixml -Path 'C:\\k\\c.xml'\n",
      "Copy-Item -LiteralPath '\\\\fileserver\\share\\x.msu' -Destination 'C:\\k'\n",
    ])
      assert.ok(remoteSessionProblems(head + bad).length > 0, bad);
    // The same worker handed to a runner that does not run it as SYSTEM still fails.
    const real = powershell(installUpdates().apply).script;
    assert.deepEqual(remoteSessionProblems(real), []);
    const asUser = real.replace("-UserId 'SYSTEM' -LogonType ServiceAccount", "-UserId 'Administrator' -LogonType S4U");
    assert.match(remoteSessionProblems(asUser).join(), /not defined here as a scheduled task run by SYSTEM/);
    // Taken out of the here-string, the worker's calls count as the session's.
    const unwrapped = real.replace("-Script @'\n", "-Script ''\n").replace(/\n'@\n/, '\n');
    assert.ok(remoteSessionProblems(unwrapped).length > 0);
  });
});

describe('patch trace of examples/k8s-libvirt-3-2-1.yaml', () => {
  it('matches its golden trace; drains before the updates, the reboot waited through', async () => {
    const trace = await traceExample('k8s-libvirt-3-2-1', 'plan-order', 'patch');
    try {
      assertGolden('traces/patch-k8s-libvirt-3-2-1.txt', renderTrace(trace));
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      const at = new Positions(trace);
      const w = trace.plan.nodes.find((n) => n.osFamily === 'windows')?.name ?? '';
      const api = trace.plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
      assert.ok(
        at.last(`task-deploy-cluster/${api}/patch-drain-${w}`) < at.first(`task-deploy-cluster/${w}/win-updates`),
      );
      assert.ok(
        at.last(`task-deploy-cluster/${w}/win-pod-network`) <
          at.first(`task-deploy-cluster/${api}/patch-uncordon-${w}`),
      );
    } finally {
      rmSync(trace.stateDir, { recursive: true, force: true });
    }
  });
});

describe('patch --linux trace of examples/k8s-libvirt-1-1-1.yaml', () => {
  it('matches its golden trace; the control plane first, each node verified before its uncordon', async () => {
    const trace = await traceExample('k8s-libvirt-1-1-1', 'plan-order', 'patch --linux');
    try {
      assertGolden('traces/patch-linux-k8s-libvirt-1-1-1.txt', renderTrace(trace));
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      const at = new Positions(trace);
      const api = trace.plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
      const w = trace.plan.nodes.find((n) => n.osFamily === 'windows')?.name ?? '';
      const id = (host: string, name: string) => `task-deploy-cluster/${host}/${name}`;
      assert.ok(at.last(id(api, `patch-uncordon-${api}`)) < at.first(id(api, `patch-cordon-${w}`)));
      for (const [n, back] of [
        [api, id(api, `patch-ready-${api}`)],
        [w, id(w, 'win-pod-network')],
      ] as const) {
        const verify = trace.plan.tasks.filter(
          (t) => t.name === `patch-verify-${n}` || (t.host === n && t.name === 'patch-verify'),
        );
        assert.ok(verify.length >= 2, n);
        for (const t of verify) {
          assert.ok(at.first(t.id) > at.last(back), `${t.id} before ${back}`);
          assert.ok(at.last(t.id) < at.first(id(api, `patch-uncordon-${n}`)), `${t.id} after the uncordon`);
        }
      }
    } finally {
      rmSync(trace.stateDir, { recursive: true, force: true });
    }
  });
});

describe('patch stops at the first node that does not come back', () => {
  it('the next node is never touched and the broken one is never uncordoned', async () => {
    const text = readFileSync(repoPath('examples', 'k8s-libvirt-3-2-1.yaml'), 'utf8').replace(
      'count: 1\n        os: windows-2025',
      'count: 2\n        os: windows-2025',
    );
    const two = resolveModel(readSpec({ kind: 'file', path: 'two.yaml', text }));
    const win = two.nodes.filter((n) => n.osFamily === 'windows').map((n) => n.name);
    assert.equal(win.length, 2);
    const { plan, files } = assemblePatchPlan(two, { kbs: [], securityOnly: false, maxUnavailable: 1 });
    const contents = new Map(plan.artifacts.map((a, i) => [a.id, Buffer.from(files[i]?.content ?? '')]));
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const names = planSecretNames(plan, contents);
      await seedSecrets(stateDir, names, capturedNames(plan));
      const target = new RecordingTarget(plan, names);
      target.failing.add(`task-deploy-cluster/${win[0] ?? ''}/win-pod-network`);
      await assert.rejects(
        applyPlan(plan, contents, {
          stateDir,
          concurrency: 1,
          retry: { attempts: 1 },
          signal: new AbortController().signal,
          listeners: [target.gate.listener],
          transportFor: target.transportFor,
        }),
        HostError,
      );
      const ran = new Set(target.steps.map((s) => s.task));
      assert.ok(ran.has(`task-deploy-cluster/${win[0] ?? ''}/win-updates`));
      assert.ok(![...ran].some((t) => t.endsWith(`patch-uncordon-${win[0] ?? ''}`)), 'the broken node was uncordoned');
      assert.ok(![...ran].some((t) => t.includes(win[1] ?? '?')), 'the roll went on to the next node');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('patch checks first, then acts', () => {
  const text = readFileSync(repoPath('examples', 'k8s-libvirt-3-2-1.yaml'), 'utf8').replace(
    'count: 1\n        os: windows-2025',
    'count: 2\n        os: windows-2025',
  );
  const two = resolveModel(readSpec({ kind: 'file', path: 'two.yaml', text }));
  const win = two.nodes.filter((n) => n.osFamily === 'windows');
  const selection = { kbs: [], securityOnly: false };

  /** Runs patchNodes against recording targets; `answers`: the query's stdout per node. */
  async function patchWith(
    stateDir: string,
    answers: Record<string, string>,
    failing: string[] = [],
    stderr: Record<string, string> = {},
  ) {
    const query = assemblePatchQueryPlan(two, win, selection).plan;
    const asked = new RecordingTarget(query, []);
    for (const [node, out] of Object.entries(answers))
      asked.outputs.set(`task-gather-facts/${node}/${PATCH_QUERY_TASK}`, out);
    const rolled: RecordingTarget[] = [];
    const run = patchNodes(
      two,
      { ...selection, maxUnavailable: 1 },
      {
        stateDir,
        query: {
          signal: new AbortController().signal,
          listeners: [asked.gate.listener],
          transportFor: asked.transportFor,
        },
        runRoll: async ({ plan, files }, dir) => {
          const contents = new Map(plan.artifacts.map((a, i) => [a.id, Buffer.from(files[i]?.content ?? '')]));
          const names = planSecretNames(plan, contents);
          await seedSecrets(dir, names, capturedNames(plan));
          const target = new RecordingTarget(plan, names);
          for (const f of failing) target.failing.add(f);
          for (const [id, text] of Object.entries(stderr)) target.failureText.set(id, text);
          rolled.push(target);
          await applyPlan(plan, contents, {
            stateDir: dir,
            concurrency: 1,
            retry: { attempts: 1 },
            signal: new AbortController().signal,
            listeners: [target.gate.listener],
            transportFor: target.transportFor,
          });
        },
      },
    );
    return { run, asked, rolled };
  }
  // A node's own steps; its read-only probes towards another node being verified (patch-verify-OTHER) are not.
  const touched = (targets: RecordingTarget[], node: string) =>
    targets
      .flatMap((t) => t.steps)
      .filter((s) => (s.host === node && !/\/patch-verify-/.test(s.task)) || s.task.endsWith(`-${node}`));

  it('a node with nothing pending is never cordoned, drained or rebooted; the other one is', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const [a, b] = [win[0]?.name ?? '', win[1]?.name ?? ''];
      const { run, asked, rolled } = await patchWith(stateDir, {
        [a]: 'Searching…\npending\tKB5040437\t2024-07 Cumulative Update for Microsoft server operating system\n',
        [b]: '',
      });
      const result = await run;
      assert.deepEqual(result.rolled, [a]);
      assert.deepEqual(
        result.pending.get(a)?.updates.map((u) => u.id),
        ['KB5040437'],
      );
      assert.equal(asked.steps.filter((s) => s.kind === 'apply').length, 2, 'the query ran on both nodes');
      assert.deepEqual(touched(rolled, b), [], `${b} has nothing pending but was touched`);
      const ran = touched(rolled, a).map((s) => s.task.split('/')[2]);
      assert.ok(ran.includes(`patch-cordon-${a}`) && ran.includes('win-updates'));
      assert.ok(!existsSync(join(stateDir, 'patch', 'roll.json')), 'the finished roll is forgotten');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('nothing pending anywhere: no roll at all; a pending reboot alone is something to do', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const none = await patchWith(stateDir, {});
      assert.deepEqual((await none.run).rolled, []);
      assert.equal(none.rolled.length, 0, 'a roll plan ran with nothing pending');
      const reboot = await patchWith(stateDir, { [win[1]?.name ?? '']: 'reboot-required\r\n' });
      assert.deepEqual((await reboot.run).rolled, [win[1]?.name]);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('an interrupted roll resumes with its own nodes, without asking again (an updated node looks clean)', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const a = win[0]?.name ?? '';
      const first = await patchWith(stateDir, { [a]: 'pending\tKB1\tx\n' }, [
        `task-deploy-cluster/${a}/win-pod-network`,
      ]);
      await assert.rejects(first.run, HostError);
      assert.deepEqual(JSON.parse(readFileSync(join(stateDir, 'patch', 'roll.json'), 'utf8')), {
        nodes: [a],
        pending: { [a]: { updates: [{ id: 'KB1', title: 'x' }], rebootRequired: false } },
      });
      const again = await patchWith(stateDir, {});
      const result = await again.run;
      assert.equal(result.resumed, true);
      assert.deepEqual(result.rolled, [a]);
      assert.equal(again.asked.steps.length, 0, 'the query ran while a roll was under way');
      const ran = touched(again.rolled, a).map((s) => `${s.task.split('/')[2]}:${s.kind}`);
      assert.ok(ran.includes(`patch-uncordon-${a}:apply`), 'the resumed roll did not uncordon');
      assert.ok(!ran.includes('win-updates:apply'), 'the journal should have skipped the finished updates');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('a failing verify cell stops the roll: the node stays cordoned, the error names the cell and the rollback', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const [a, b] = [win[0]?.name ?? '', win[1]?.name ?? ''];
      const api = two.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
      // The first control plane's cells towards the node (ICMP, MTU, its kubelet) fail.
      const cell = `task-deploy-cluster/${api}/patch-verify-${a}`;
      const { run, rolled } = await patchWith(
        stateDir,
        { [a]: 'pending\tKB5040437\t2024-07 Cumulative Update\n', [b]: 'pending\tKB5040438\tother\n' },
        [cell],
      );
      const error = await run.then(
        () => assert.fail('the roll went through a failing cell'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof HostError && error.code === 'patch.node-unhealthy', String(error));
      assert.match(error.message, new RegExp(`${cell}: apply exited 1: trace: ${cell} fails`), 'what broke');
      assert.match(
        error.message,
        new RegExp(`${a} stays cordoned\\. Installed: KB5040437 \\(2024-07 Cumulative Update\\)`),
      );
      assert.match(error.message, /wusa \/uninstall \/kb:5040437 \/quiet \/norestart; Restart-Computer/);
      assert.match(error.message, new RegExp(`kubectl uncordon ${a}`));
      assert.doesNotMatch(error.message, /KB5040438/, 'the next node is not named: nothing was installed there');
      const order = rolled.flatMap((t) => t.steps).map((s) => s.task);
      const ran = new Set(order);
      const network = `task-deploy-cluster/${a}/win-pod-network`;
      assert.ok(ran.has(network) && ran.has(`task-deploy-cluster/${a}/patch-verify`));
      assert.ok(order.indexOf(cell) > order.lastIndexOf(network), 'verify ran before the pod network was back');
      assert.ok(![...ran].some((t) => t.endsWith(`patch-uncordon-${a}`)), 'the broken node was uncordoned');
      assert.ok(![...ran].some((t) => t.endsWith(`patch-cordon-${b}`) || t === `task-deploy-cluster/${b}/win-updates`));
      // The same failure again, resumed: the rollback still names the KB (roll.json kept the query's answer).
      const again = await patchWith(stateDir, {}, [cell]);
      await assert.rejects(again.run, /wusa \/uninstall \/kb:5040437/);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('the stage step fails (its SYSTEM task did not start): the node is never cordoned', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const a = win[0]?.name ?? '';
      const stage = `task-deploy-cluster/${a}/win-updates-stage`;
      const { run, rolled } = await patchWith(stateDir, { [a]: 'pending\tKB1\tx\n' }, [stage], {
        [stage]: 'the SYSTEM task kubemix-patch-stage did not start within 120 s (state Ready, last result 0x00041303)',
      });
      await assert.rejects(run, /kubemix-patch-stage did not start/);
      const ran = touched(rolled, a).map((s) => s.task.split('/')[2]);
      assert.ok(ran.includes('win-updates-stage'));
      assert.ok(!ran.includes(`patch-cordon-${a}`), 'cordoned although nothing could be downloaded');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  for (const [what, failing, text] of [
    [
      'the install failed before Windows Update began',
      'win-updates',
      `${NOTHING_INSTALLED} the SYSTEM task kubemix-patch-install did not start within 120 s (state Ready, last result 0x00041303)`,
    ],
    [
      'the drain did not finish',
      'patch-drain',
      'error: cannot evict pod as it would violate the pod disruption budget',
    ],
  ] as const)
    it(`${what}: nothing was installed, so the node is uncordoned and left out of the roll`, async () => {
      const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
      try {
        const a = win[0]?.name ?? '';
        const api = two.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
        const id =
          failing === 'win-updates'
            ? `task-deploy-cluster/${a}/win-updates`
            : `task-deploy-cluster/${api}/patch-drain-${a}`;
        const { run, rolled } = await patchWith(stateDir, { [a]: 'pending\tKB1\tx\n' }, [id], { [id]: text });
        const error = await run.then(
          () => assert.fail('the roll went through'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof HostError && error.code === 'patch.node-unhealthy', String(error));
        assert.match(
          error.message,
          new RegExp(`${a}: nothing was installed on it; it was uncordoned and left out of this roll`),
        );
        assert.doesNotMatch(error.message, /stays cordoned/);
        const uncordoned = rolled
          .flatMap((t) => t.steps)
          .filter((s) => s.task.endsWith(`patch-uncordon-${a}`) && s.kind === 'apply');
        assert.equal(uncordoned.length, 1, 'uncordoned once');
        assert.ok(!existsSync(join(stateDir, 'patch', 'roll.json')), 'the roll of that one node is over');
        // The next run asks afresh instead of resuming a roll whose cordon the journal thinks done.
        const again = await patchWith(stateDir, {});
        assert.equal((await again.run).resumed, false);
      } finally {
        rmSync(stateDir, { recursive: true, force: true });
      }
    });

  it('an install still running at the bound: the node stays cordoned (it may be installing), named with its rollback', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-patch-'));
    try {
      const a = win[0]?.name ?? '';
      const id = `task-deploy-cluster/${a}/win-updates`;
      const { run, rolled } = await patchWith(stateDir, { [a]: 'pending\tKB1\tx\n' }, [id], {
        [id]: 'the SYSTEM task kubemix-patch-install is still running after 5400 s; it was left to finish',
      });
      await assert.rejects(run, new RegExp(`${a} stays cordoned`));
      assert.ok(!rolled.flatMap((t) => t.steps).some((s) => s.task.endsWith(`patch-uncordon-${a}`)));
      assert.ok(existsSync(join(stateDir, 'patch', 'roll.json')), 'the roll stays under way: patch resumes it');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('the query script parses, passes our rules, installs nothing; its output is parsed', () => {
    const script = assemblePatchQueryPlan(two, win, { kbs: ['KB5040437'], securityOnly: true }).plan.tasks[0]?.apply
      .script;
    assert.deepEqual(parseErrors(script ?? ''), []);
    assert.deepEqual(lintPowerShell(script ?? ''), []);
    assert.doesNotMatch(script ?? '', /CreateUpdateInstaller|CreateUpdateDownloader|shutdown/);
    assert.match(
      pendingText(new Map([['w', parsePending(['pending\tKB1,KB2\tA title', 'reboot-required', 'noise'])]])),
      /^w: 1 pending update\(s\), reboot pending\n {2}KB1,KB2 {2}A title\n$/,
    );
  });
});

describe('patch --linux plan', () => {
  const { model } = example('k8s-libvirt-3-2-1');
  const plan = assemblePatchPlan(model, { kbs: [], securityOnly: false, linux: true, maxUnavailable: 1 }).plan;
  const cps = model.nodes.filter((n) => n.role === 'control-plane').map((n) => n.name);
  const linuxWorkers = model.nodes.filter((n) => n.role === 'worker' && n.osFamily === 'linux').map((n) => n.name);
  const win = model.nodes.filter((n) => n.osFamily === 'windows').map((n) => n.name);
  const api = cps[0] ?? '';

  it('control planes one at a time first, then Linux workers, then Windows; each chain after the one before', () => {
    // A Windows node's chain starts with staging its updates on the node, before the cordon.
    const chainStart = (n: string) =>
      plan.tasks.find(
        (t) =>
          t.id ===
          (win.includes(n)
            ? `task-deploy-cluster/${n}/win-updates-stage`
            : `task-deploy-cluster/${api}/patch-cordon-${n}`),
      );
    const chainEnd = (n: string) => `task-deploy-cluster/${api}/patch-uncordon-${n}`;
    const order = [...cps, ...linuxWorkers, ...win];
    assert.ok(cps.length >= 2 && linuxWorkers.length >= 1 && win.length >= 1);
    order.forEach((n, i) => {
      assert.deepEqual(chainStart(n)?.after, i === 0 ? [] : [chainEnd(order[i - 1] ?? '')], n);
    });
    for (const n of [...cps, ...linuxWorkers]) {
      const u = plan.tasks.find((t) => t.host === n && t.name === 'linux-updates') ?? assert.fail(n);
      assert.equal(u.reboots, true);
      assert.deepEqual(u.after, [`task-deploy-cluster/${api}/patch-drain-${n}`]);
      assert.match(u.apply.script, /apt-mark hold \$installed/);
    }
    // A control plane's reboot takes the API server with it: its Ready wait first waits for /readyz.
    const ready = plan.tasks.find((t) => t.id === `task-deploy-cluster/${api}/patch-ready-${api}`);
    assert.match(ready?.apply.script ?? '', /get --raw=\/readyz/);
  });

  it('dnf: Kubernetes packages excluded, needs-restarting -r decides the reboot; scripts pass shellcheck', () => {
    const dnf = installLinuxUpdates('dnf', { securityOnly: true });
    const d = { check: dnf.check.text, apply: dnf.apply.text };
    assert.match(d.apply, /dnf -y -q upgrade --security --exclude=kubeadm,kubectl,kubelet,cri-tools,kubernetes-cni/);
    assert.match(d.check, /needs-restarting -r/);
    const apt = installLinuxUpdates('apt', { securityOnly: false });
    const a = { check: apt.check.text, apply: apt.apply.text };
    assert.match(a.check, /\/var\/run\/reboot-required/);
    for (const script of [d.check, d.apply, a.check, a.apply, listLinuxPending('dnf', { securityOnly: false }).text]) {
      const r = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], { input: script, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout);
    }
  });

  it("each Linux node's underlay cells run after Ready and before its uncordon", () => {
    for (const n of [...cps, ...linuxWorkers]) {
      const verify = plan.tasks.filter(
        (t) => t.name === `patch-verify-${n}` || (t.host === n && t.name === 'patch-verify'),
      );
      assert.deepEqual(new Set(verify.map((t) => t.host)), new Set(model.nodes.map((x) => x.name)), n);
      for (const t of verify) assert.deepEqual(t.after, [`task-deploy-cluster/${api}/patch-ready-${n}`], t.id);
      const uncordon = plan.tasks.find((t) => t.name === `patch-uncordon-${n}`);
      assert.deepEqual(uncordon?.after, verify.map((t) => t.id).sort(), n);
    }
  });

  it('--max-unavailable 2: no cell between two workers that may reboot at the same time', () => {
    const wide = assemblePatchPlan(model, { kbs: [], securityOnly: false, linux: true, maxUnavailable: 2 }).plan;
    const workers = model.nodes.filter((n) => n.role === 'worker').map((n) => n.name);
    for (const w of workers) {
      const scripts = wide.tasks
        .filter((t) => t.name === `patch-verify-${w}` || (t.host === w && t.name === 'patch-verify'))
        .map((t) => t.apply.script)
        .join('\n');
      for (const peer of workers.filter((x) => x !== w)) {
        assert.ok(!scripts.includes(`/${w}/${peer}`) && !scripts.includes(`/${peer}/${w}`), `${w} ↔ ${peer}`);
      }
      assert.ok(scripts.includes(`underlay/ping/${w}/${api}`), `${w} still checks the control plane`);
    }
  });

  it('rollback: apt reinstalls the versions the node had, dnf undoes its transaction, Windows uninstalls the KBs', () => {
    const node = (name: string) => model.nodes.find((n) => n.name === name) ?? assert.fail(name);
    const linux = node(linuxWorkers[0] ?? '');
    const pending = {
      updates: [
        { id: 'libc6', title: '2.36-9 -> 2.36-9+deb12u9' },
        { id: 'linux-image-6.1.0-30-amd64', title: ' -> 6.1.124-1' },
      ],
      rebootRequired: false,
    };
    assert.deepEqual(rollbackCommands(linux, pending), ['apt-get install -y --allow-downgrades libc6=2.36-9']);
    assert.deepEqual(rollbackCommands({ ...linux, os: 'centos-stream-9' }, pending), ['dnf -y history undo last']);
    const w = node(win[0] ?? '');
    assert.deepEqual(rollbackCommands(w, { updates: [{ id: 'KB1,KB22', title: 't' }], rebootRequired: false }), [
      'wusa /uninstall /kb:1 /quiet /norestart',
      'wusa /uninstall /kb:22 /quiet /norestart',
      'Restart-Computer',
    ]);
    assert.match(rollbackText(w, undefined, true), /Get-Content C:\\k\\kubemix\\patch-installed\.txt/);
    assert.match(rollbackText(linux, pending, false), /stays cordoned; no update was installed on it/);
  });

  it('--nodes naming a Linux node without --linux is refused, naming --linux', () => {
    assert.throws(
      () => assemblePatchPlan(model, { nodes: [api], kbs: [], securityOnly: false, maxUnavailable: 1 }),
      (e: unknown) => e instanceof InputError && e.path === '--nodes' && /add --linux/.test(e.message),
    );
  });
});
