// Name resolution before any DNS (the hosts-file block) and a reset that
// removes only what kubemix and flannel made, never following links.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { resolveModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { readSpec } from '../../src/spec/read.js';
import { repoPath } from '../helpers/cli.js';
import { assembleResetPlan } from '../../src/plan/reset.js';
import type { Task } from '../../src/plan/types.js';
import { HOSTS_BEGIN, HOSTS_END, windowsHostsEntries } from '../../src/render/windows/hosts.js';
import { WIN } from '../../src/render/windows/paths.js';
import { ownedNetworks, resetScript } from '../../src/render/windows/reset.js';
import { examplePlan } from '../trace/run-trace.js';
import { GOLDEN_COMBOS, modelFor, type Combo } from './fixtures.js';
import { lintPowerShell, nodesOfType, parseErrors } from './powershell.js';

function dependsOn(tasks: readonly Task[], later: Task, earlier: Task): boolean {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const stack = [...later.after];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const id = stack.pop() ?? '';
    if (id === earlier.id) return true;
    if (!seen.has(id)) {
      seen.add(id);
      stack.push(...(byId.get(id)?.after ?? []));
    }
  }
  return false;
}

describe('hosts file: the API and registry names before any DNS', () => {
  it('existing driver (examples/existing-host-gw): the block names api and registry, before containerd and the join', () => {
    const { plan } = examplePlan('existing-host-gw');
    const win = plan.tasks.filter((t) => t.host === 'win1');
    const hosts = win.find((t) => t.name === 'win-hosts-file');
    assert.ok(hosts);
    const script = hosts.apply.script;
    assert.match(script, /'192\.0\.2\.\d+ api\.lab\.example\.internal'/);
    assert.match(script, /'192\.0\.2\.5 registry\.lab\.example\.internal'/);
    assert.match(script, new RegExp(`'${HOSTS_BEGIN}'.*'${HOSTS_END}'`));
    assert.match(script, /C:\\Windows\\System32\\drivers\\etc\\hosts/);
    for (const name of ['win-containerd', 'win-kubeadm-join', 'win-boot-order']) {
      const t = win.find((x) => x.name === name);
      assert.ok(t && dependsOn(plan.tasks, t, hosts), `${name} waits for win-hosts-file`);
    }
    for (const s of [hosts.apply.script, hosts.check?.script ?? '']) {
      assert.deepEqual(parseErrors(s), []);
      assert.deepEqual(lintPowerShell(s), []);
    }
  });
  it('only the names the node uses: no node names, no registry without the services registry', () => {
    const model = modelFor(GOLDEN_COMBOS[0] as Combo);
    const entries = windowsHostsEntries(model);
    assert.deepEqual(
      entries.map((e) => e.split(' ')[1]),
      ['api.k8scluster.kubeinit.local', 'registry.k8scluster.kubeinit.local'],
    );
    assert.ok(!entries.some((e) => model.nodes.some((n) => e.endsWith(` ${n.name}`) || e.endsWith(` ${n.fqdn}`))));
  });
});

describe('reset removes only what kubemix and flannel made', () => {
  for (const c of [GOLDEN_COMBOS[0], GOLDEN_COMBOS[1]] as Combo[]) {
    it(`${c.backend}: networks by name, endpoints on them, trees without following links, the hosts block`, () => {
      const model = modelFor(c);
      const script = resetScript(model);
      assert.deepEqual(parseErrors(script), []);
      assert.deepEqual(ownedNetworks(model), ['External', c.backend === 'vxlan' ? 'flannel.4096' : 'cbr0']);
      assert.match(
        script,
        new RegExp(
          `Where-Object \\{ @\\('External', '${c.backend === 'vxlan' ? 'flannel\\.4096' : 'cbr0'}'\\) -contains \\$_\\.Name \\}`,
        ),
      );
      // Every HNS DELETE is of an owned network or of an endpoint on one.
      const deletes = script.split('\n').filter((l) => l.includes("-Method 'DELETE'"));
      assert.equal(deletes.length, 2);
      assert.ok(deletes.some((l) => /if \(\$ownedIds -contains \$e\.VirtualNetwork\)/.test(l)));
      assert.ok(deletes.some((l) => /^foreach \(\$n in \$owned\)/.test(l)));
      assert.ok(!/-ne 'nat'/.test(script), 'no "everything but nat" rule');
      // No recursive delete anywhere: a link under C:\var\lib\kubelet is removed as a link.
      assert.ok(
        nodesOfType(script, 'command').some((cmd) => /^Remove-Item -Force -LiteralPath/.test(cmd)),
        'the grammar sees the commands',
      );
      assert.deepEqual(
        nodesOfType(script, 'command').filter((cmd) => /^Remove-Item\b/i.test(cmd) && /-Recurse/i.test(cmd)),
        [],
      );
      assert.match(script, /ReparsePoint/);
      assert.match(script, /\[IO\.Directory\]::Delete\(\$item\.FullName, \$false\)/);
      assert.ok(script.includes(`'${WIN.kubeletDir}'`));
      assert.match(script, /\[Array\]::IndexOf\(\$lines, '# BEGIN kubemix'\)/);
    });
  }
  it('the reset plan carries this script', () => {
    // Existing hosts: a libvirt cluster's guests are destroyed by down, not reset.
    const path = repoPath('examples', 'existing-host-gw.yaml');
    const existing = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
    const { files } = assembleResetPlan(existing);
    assert.equal(
      files.find((f) => f.remotePath === WIN.resetScript && f.node === 'win1')?.content,
      resetScript(existing),
    );
    const model = modelFor(GOLDEN_COMBOS[0] as Combo);
    assert.ok(assemblePlan(model).plan.tasks.some((t) => t.name === 'win-hosts-file'));
  });
});

describe('preflight no longer refuses networks kubemix did not make', () => {
  it("only flannel's network from an earlier join is a leftover", () => {
    const { plan } = assemblePlan(modelFor(GOLDEN_COMBOS[0] as Combo));
    const pre = plan.tasks.find((t) => t.host === 'win-01' && t.name === 'win-preflight')?.apply.script ?? '';
    assert.match(pre, /Where-Object \{ \$_\.Name -eq 'flannel\.4096' \}/);
    assert.ok(!/-ne 'nat'/.test(pre));
  });
});
