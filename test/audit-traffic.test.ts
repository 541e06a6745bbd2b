// The traffic audit: every flow the cluster needs toward a node is allowed by
// the firewall the plan gives that node. Each mutation below is a defect the
// audit must catch: Windows nodes without the ICMPv4 echo rule (the first
// blocker of issue 30), without the VXLAN rule, a Linux firewalld without the
// VXLAN port, an existing Windows host whose ICMP prerequisite is not checked.
// The firewall reader is held to tree-sitter-powershell: every firewall
// cmdlet the grammar finds in a Windows script is read with the same
// parameters.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Parser from 'tree-sitter';
import { auditTraffic, trafficText, type TrafficResult } from '../src/audit/index.js';
import { powershellStatements } from '../src/audit/ps-words.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../src/plan/assemble.js';
import type { Task } from '../src/plan/types.js';
import { readSpec } from '../src/spec/read.js';
import { REPO, SHAPES, modelFor as shapeModel } from './helpers/shapes.js';
import {
  GOLDEN_COMBOS,
  CALICO_COMBOS,
  HOSTPROCESS_COMBOS,
  comboName,
  modelFor as comboModel,
} from './windows/fixtures.js';

const grammar = ((await import('tree-sitter-powershell/bindings/node/index.js')) as { default: Parser.Language })
  .default;
const parser = new Parser();
parser.setLanguage(grammar);

function example(name: string): ClusterModel {
  const path = join(REPO, 'examples', `${name}.yaml`);
  return resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
}

const MODELS: [string, ClusterModel][] = [
  ...SHAPES.map((s): [string, ClusterModel] => [s, shapeModel(s)]),
  ...['existing-host-gw', 'calico-existing', 'calico-mixed'].map((e): [string, ClusterModel] => [e, example(e)]),
  ...[...GOLDEN_COMBOS, ...CALICO_COMBOS, ...HOSTPROCESS_COMBOS].map((c): [string, ClusterModel] => [
    comboName(c),
    comboModel(c),
  ]),
];

const dropped = (r: TrafficResult): string[] =>
  r.decisions
    .filter((d) => !d.allowed)
    .map((d) => `${d.flow.to} ${d.flow.protocol} ${d.flow.port ?? d.flow.icmpType ?? ''}: ${d.by}`);

/** The plan with every task script on `host` (and its install media) rewritten. */
function editScripts(p: AssembledPlan, host: string, change: (script: string) => string): AssembledPlan {
  const tasks = p.plan.tasks.map((t): Task =>
    t.host === host ? { ...t, apply: { ...t.apply, script: change(t.apply.script) } } : t,
  );
  const files = p.files.map((f) => (f.remotePath.endsWith('.ps1') ? { ...f, content: change(f.content) } : f));
  return { plan: { ...p.plan, tasks }, files };
}

/** Drops the firewall statements that name `rule` (New-, Set-) from a script. */
const withoutRule = (rule: string) => (script: string) =>
  script
    .split('\n')
    .filter((l) => !(/NetFirewallRule /.test(l) && l.includes(`'${rule}'`)))
    .join('\n')
    .replace(/if \(\$null -eq \(Get-NetFirewallRule -Name '[^']*' -ErrorAction SilentlyContinue\)\) \{\n\}\n?/g, '');

describe('traffic audit of the plans kubemix makes', () => {
  for (const [name, model] of MODELS) {
    it(`${name}: every needed flow is allowed`, () => {
      const r = auditTraffic(model, assemblePlan(model));
      assert.deepEqual(dropped(r), [], trafficText(r));
      assert.ok(r.ok);
      assert.ok(r.decisions.length > 0);
    });
  }

  it('lists the flows the issue names toward a Windows node', () => {
    const model = shapeModel('k8s-libvirt-1-1-1');
    const r = auditTraffic(model, assemblePlan(model));
    const toWin = r.decisions
      .filter((d) => d.flow.to === 'compute-01')
      .map((d) => `${d.flow.protocol} ${d.flow.port ?? d.flow.icmpType}`);
    for (const f of ['icmpv4 8', 'udp 4789', 'tcp 10250', 'tcp 30000-32767', 'tcp 22']) assert.ok(toWin.includes(f), f);
    // Before node prep only the install media's rules count: the ICMP rule comes from there.
    const icmp = r.decisions.find((d) => d.flow.to === 'compute-01' && d.flow.protocol === 'icmpv4');
    assert.match(icmp?.by ?? '', /kubemix-icmpv4-echo \(install media kubemix\/kubemix-setup\.ps1\)/);
  });
});

describe('the traffic audit catches a firewall that drops what the cluster needs', () => {
  const libvirt = assemblePlan(shapeModel('k8s-libvirt-1-1-1'));
  const model = shapeModel('k8s-libvirt-1-1-1');

  it('no ICMPv4 echo rule on the Windows node: validations, verify, upgrade and patch pings fail', () => {
    const r = auditTraffic(model, editScripts(libvirt, 'compute-01', withoutRule('kubemix-icmpv4-echo')));
    assert.ok(!r.ok);
    assert.ok(
      dropped(r).some((d) => /^compute-01 icmpv4 8/.test(d)),
      dropped(r).join('\n'),
    );
  });

  it('the ICMP rule only in node prep is too late: task-run-validations pings first', () => {
    const media = libvirt.files.map((f) =>
      f.remotePath.endsWith('kubemix-setup.ps1') ? { ...f, content: withoutRule('kubemix-icmpv4-echo')(f.content) } : f,
    );
    const r = auditTraffic(model, { plan: libvirt.plan, files: media });
    assert.ok(
      dropped(r).some((d) => /^compute-01 icmpv4 8: only kubemix-icmpv4-echo .* after task-run-validations/.test(d)),
      dropped(r).join('\n'),
    );
  });

  it('no VXLAN rule on the Windows node: the pod network and verify UDP probe fail', () => {
    const r = auditTraffic(model, editScripts(libvirt, 'compute-01', withoutRule('kubemix-vxlan')));
    assert.ok(
      dropped(r).some((d) => /^compute-01 udp 4789/.test(d)),
      dropped(r).join('\n'),
    );
  });

  it('no VXLAN port in firewalld on a Linux node', () => {
    const plan = {
      ...libvirt.plan,
      tasks: libvirt.plan.tasks.map((t) =>
        t.name === 'firewall'
          ? { ...t, apply: { ...t.apply, script: t.apply.script.replace(' --add-port=4789/udp', '') } }
          : t,
      ),
    };
    const r = auditTraffic(model, { plan, files: libvirt.files });
    assert.ok(
      dropped(r).some((d) => /^controller-01 udp 4789/.test(d)),
      dropped(r).join('\n'),
    );
  });

  it('an existing Windows host whose validation no longer checks ICMP echo: nothing opens it before the pings', () => {
    const existing = example('existing-host-gw');
    const p = assemblePlan(existing);
    assert.ok(auditTraffic(existing, p).ok);
    const plan = {
      ...p.plan,
      tasks: p.plan.tasks.map((t) =>
        t.name === 'os-and-size'
          ? { ...t, apply: { ...t.apply, script: t.apply.script.replace(/\$echo = [^\n]*\n/, '') } }
          : t,
      ),
    };
    const r = auditTraffic(existing, { plan, files: p.files });
    assert.ok(
      dropped(r).some((d) => /^win1 icmpv4 8/.test(d)),
      dropped(r).join('\n'),
    );
  });

  it('a rule limited to another network does not count', () => {
    const r = auditTraffic(
      model,
      editScripts(libvirt, 'compute-01', (s) =>
        s.replaceAll("-RemoteAddress '10.0.0.0/24'", "-RemoteAddress '192.0.2.0/24'"),
      ),
    );
    assert.ok(dropped(r).some((d) => /^compute-01 icmpv4 8/.test(d)));
    assert.ok(dropped(r).some((d) => /^compute-01 tcp 22/.test(d)));
  });
});

/** Every command the grammar sees, by name, with its parameters as the grammar splits them. */
function grammarCommands(script: string, names: readonly string[]): { name: string; params: Map<string, string[]> }[] {
  const out: { name: string; params: Map<string, string[]> }[] = [];
  const visit = (n: Parser.SyntaxNode): void => {
    if (n.type === 'command') {
      const name = n.childForFieldName('command_name')?.text.toLowerCase() ?? '';
      if (names.includes(name)) {
        const params = new Map<string, string[]>();
        let current: string | undefined;
        const elements = n.childForFieldName('command_elements')?.namedChildren ?? [];
        for (const e of elements) {
          if (e.text.trim() === '') continue;
          if (e.type === 'command_parameter') {
            current = e.text.slice(1).toLowerCase();
            params.set(current, []);
          } else if (current !== undefined && e.type !== 'comment') {
            const text = e.text;
            const values = /^'((?:[^']|'')*)'$/.test(text)
              ? [text.slice(1, -1).replaceAll("''", "'")]
              : text.split(',').map((v) => v.replace(/^'(.*)'$/, '$1'));
            params.get(current)?.push(...values);
          }
        }
        out.push({ name, params });
      }
    }
    for (const c of n.children) visit(c);
  };
  visit(parser.parse(script, undefined, { bufferSize: Buffer.byteLength(script) * 2 + 1024 }).rootNode);
  return out;
}

describe("the firewall reader agrees with tree-sitter-powershell on kubemix's scripts", () => {
  const names = ['new-netfirewallrule', 'set-netfirewallrule', 'remove-netfirewallrule', 'disable-netfirewallrule'];
  for (const [name, model] of MODELS.filter(([, m]) => m.nodes.some((n) => n.osFamily === 'windows'))) {
    it(name, () => {
      const p = assemblePlan(model);
      const scripts = [
        ...p.plan.tasks.filter((t) => t.apply.shell === 'powershell').map((t) => t.apply.script),
        ...p.files.filter((f) => f.remotePath.endsWith('.ps1')).map((f) => f.content),
      ];
      let seen = 0;
      for (const script of scripts) {
        const ours = powershellStatements(script, names).map((s) => ({ name: s.command, params: new Map(s.params) }));
        const theirs = grammarCommands(script, names);
        assert.deepEqual(ours, theirs, script);
        seen += ours.length;
      }
      assert.ok(seen > 0, 'the plan has firewall statements');
    });
  }
});
