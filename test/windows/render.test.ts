// Windows worker recipe: every script parses under tree-sitter-powershell and
// passes kubemix's rules; the known Windows traps (kubeadm join's
// service and paths, HNS networks, CNI config names) are pinned by tests.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemblePlan } from '../../src/plan/assemble.js';
import type { Plan, Task } from '../../src/plan/types.js';
import type { RenderedArtifact } from '../../src/render/types.js';
import { natExceptions, hnsNetworkName } from '../../src/render/windows/network.js';
import { WIN } from '../../src/render/windows/paths.js';
import { GOLDEN_COMBOS, comboName, hostFiles, modelFor, type Combo } from './fixtures.js';
import {
  dotSourcedFiles,
  lintPowerShell,
  parseErrors,
  secretProblems,
  topLevelStatements,
  undefinedHelpers,
} from './powershell.js';
import { HNS_FUNCTIONS, SERVICE_FUNCTIONS, withoutUnusedHelpers } from '../../src/render/windows/ps.js';
import { HELPERS_CONTENT, HELPERS_PATH, HELPER_NAMES, withHelpersFile } from '../../src/render/windows/helpers.js';
import { WINDOWS_NODES } from '../../src/render/types.js';
import { sha256Hex } from '../../src/util/json.js';

function planFor(c: Combo): {
  plan: Plan;
  files: readonly RenderedArtifact[];
  win: Task[];
  onHost: ReadonlyMap<string, string>;
} {
  const { plan, files } = assemblePlan(modelFor(c));
  return { plan, files, win: plan.tasks.filter((t) => t.host === 'win-01'), onHost: hostFiles(plan, files, 'win-01') };
}

function file(files: readonly RenderedArtifact[], path: string): string {
  const f = files.find((x) => x.node === 'win-01' && x.remotePath === path);
  assert.ok(f, `artifact ${path}`);
  return f.content;
}

const ALL: readonly Combo[] = [...GOLDEN_COMBOS, { k8s: '1.35', os: 'windows-2022', backend: 'vxlan' }];

describe('Windows PowerShell is well-formed and follows the rules', () => {
  for (const c of ALL) {
    it(comboName(c), () => {
      const { files, win, onHost } = planFor(c);
      const scripts = [
        ...win.flatMap((t) =>
          [t.apply, t.check].filter((x) => x !== null).map((x) => ({ where: t.id, text: x.script })),
        ),
        // The helpers file runs dot-sourced, after its caller's `$ErrorActionPreference = 'Stop'`.
        ...files
          .filter((f) => f.remotePath.endsWith('.ps1'))
          .map((f) => ({
            where: f.remotePath,
            text: f.remotePath === HELPERS_PATH ? `$ErrorActionPreference = 'Stop'\n${f.content}` : f.content,
          })),
      ];
      assert.ok(scripts.length > 20);
      for (const s of scripts) {
        assert.deepEqual(parseErrors(s.text), [], `${s.where} does not parse`);
        assert.deepEqual(lintPowerShell(s.text), [], `${s.where} breaks a rule`);
        assert.deepEqual(undefinedHelpers(s.text, onHost), [], `${s.where} calls a helper it does not define`);
      }
      for (const f of files) assert.deepEqual(secretProblems(f.content), [], `${f.remotePath} holds a secret`);
    });
  }
});

describe('the helpers file', () => {
  it('parses, defines functions only, calls only what it defines, and is ASCII', () => {
    assert.deepEqual(parseErrors(HELPERS_CONTENT), []);
    assert.deepEqual(topLevelStatements(HELPERS_CONTENT), ['comment', ...HELPER_NAMES.map(() => 'function_statement')]);
    assert.deepEqual(undefinedHelpers(HELPERS_CONTENT), []);
    assert.doesNotMatch(HELPERS_CONTENT, /[^\x09\x0a\x20-\x7e]/);
    assert.deepEqual(lintPowerShell(`$ErrorActionPreference = 'Stop'\n${HELPERS_CONTENT}`), []);
  });

  it('is named by its content: another text, another name', () => {
    assert.match(HELPERS_PATH, /^C:\\k\\kubemix\\helpers-[0-9a-f]{16}\.ps1$/);
    assert.ok(HELPERS_PATH.endsWith(`helpers-${sha256Hex(HELPERS_CONTENT).slice(0, 16)}.ps1`));
  });

  it('is one artifact in a plan, uploaded by every Windows node', () => {
    const { plan, files } = assemblePlan(modelFor(ALL[0] as Combo));
    const shared = plan.artifacts.filter((a) => a.remotePath === HELPERS_PATH);
    assert.deepEqual(
      shared.map((a) => a.id),
      [`${WINDOWS_NODES}:${HELPERS_PATH}`],
    );
    assert.equal(files[plan.artifacts.indexOf(shared[0] as (typeof plan.artifacts)[number])]?.content, HELPERS_CONTENT);
    const uploaders = plan.tasks.filter((t) => t.uploads.some((u) => u.artifact === shared[0]?.id));
    assert.deepEqual(
      uploaders.map((t) => t.name),
      ['win-helpers'],
    );
  });
});

describe('the checks themselves catch what they are for', () => {
  it('a script calling a helper it lost is caught', () => {
    const script = withoutUnusedHelpers(`${HNS_FUNCTIONS}$n = Get-KubemixHnsNetwork -Name 'x'\n`);
    assert.deepEqual(undefinedHelpers(script), []);
    assert.deepEqual(undefinedHelpers(script.replace(/^function Invoke-KubemixHns[^]*?\n}\n/m, '')), [
      'Invoke-KubemixHns',
    ]);
    assert.deepEqual(undefinedHelpers("Stop-KubemixService -Name 'kubelet'\n"), ['Stop-KubemixService']);
  });

  it('a helper the helpers file does not hold is caught, and so is a dot-sourced file the host lacks', () => {
    const onHost = new Map([[HELPERS_PATH, HELPERS_CONTENT]]);
    const script = withHelpersFile(`${SERVICE_FUNCTIONS}Stop-KubemixService -Name 'kubelet'\n`);
    assert.deepEqual(dotSourcedFiles(script), [HELPERS_PATH]);
    assert.doesNotMatch(script, /^function /m, 'the definition went to the file');
    assert.deepEqual(undefinedHelpers(script, onHost), []);
    assert.deepEqual(undefinedHelpers(`${script}Get-KubemixNotAHelper -Name 'x'\n`, onHost), ['Get-KubemixNotAHelper']);
    assert.deepEqual(undefinedHelpers(script), [`file ${HELPERS_PATH}`, 'Stop-KubemixService']);
    const without = HELPERS_CONTENT.replace(/^function Stop-KubemixService[^]*?\n}\n/m, '');
    assert.deepEqual(undefinedHelpers(script, new Map([[HELPERS_PATH, without]])), ['Stop-KubemixService']);
  });

  it("a script defining one of the file's helpers otherwise is refused at plan time", () => {
    const drifted = SERVICE_FUNCTIONS.replace('-Force', '-Force -NoWait');
    assert.throws(
      () => withHelpersFile(`${drifted}Stop-KubemixService -Name 'kubelet'\n`),
      /Stop-KubemixService other than/,
    );
  });

  it('the grammar reports broken scripts', () => {
    assert.notDeepEqual(parseErrors("$ErrorActionPreference = 'Stop'\nif ($x { Write-Output 1 }\n"), []);
    assert.notDeepEqual(parseErrors("$ErrorActionPreference = 'Stop'\n$a = @{ b = 'c'\n"), []);
  });
  it('the rules flag bare sc, Invoke-Expression, a disabled firewall and plaintext tokens', () => {
    const head = "$ErrorActionPreference = 'Stop'\n";
    assert.ok(lintPowerShell(`${head}sc config kubelet start= auto\n`).length > 0);
    assert.ok(lintPowerShell(`${head}iex (Invoke-WebRequest -Uri 'https://x').Content\n`).length > 0);
    assert.ok(
      lintPowerShell(
        `${head}${['Set-NetFirewallProfile', '-Profile', 'Domain', '-Enabled', ['Fal', 'se'].join('')].join(' ')}\n`,
      ).length > 0,
    );
    assert.ok(
      lintPowerShell(`${head}${['Set-MpPreference', ['-Disable', 'RealtimeMonitoring'].join(''), '$true'].join(' ')}\n`)
        .length > 0,
    );
    assert.ok(lintPowerShell(`${head}$t = 'abcdef.0123456789abcdef'\n`).length > 0);
    assert.ok(lintPowerShell(`Write-Output 1\n${head}`).length > 0);
    assert.ok(lintPowerShell(`${head}throw "bad $Version: here"\n`).length > 0);
  });
});

describe('network traps', () => {
  for (const c of ALL) {
    it(`${comboName(c)}: CNI name = HNS network flanneld creates = kube-proxy networkName`, () => {
      const { files } = planFor(c);
      const network = hnsNetworkName(modelFor(c).overlay);
      assert.equal(network, c.backend === 'vxlan' ? 'flannel.4096' : 'cbr0');
      const cni = JSON.parse(file(files, WIN.cniConf)) as {
        name: string;
        type: string;
        delegate: { type: string };
        capabilities: Record<string, boolean>;
      };
      assert.equal(cni.name, network);
      assert.equal(cni.type, 'flannel');
      assert.equal(cni.delegate.type, c.backend === 'vxlan' ? 'sdnoverlay' : 'sdnbridge');
      assert.deepEqual(cni.capabilities, { portMappings: true, dns: true });
      assert.match(
        file(files, WIN.kubeProxyConfigTemplate),
        new RegExp(`networkName: '${network.replace('.', '\\.')}'`),
      );
      const netConf = JSON.parse(file(files, WIN.flannelNetConf)) as {
        Backend: { Type: string; VNI?: number; Port?: number };
      };
      assert.equal(netConf.Backend.Type, c.backend);
      if (c.backend === 'vxlan') assert.deepEqual([netConf.Backend.VNI, netConf.Backend.Port], [4096, 4789]);
    });
  }
  it('vxlan: OutBoundNAT exceptions are pod + service CIDR, never the node network', () => {
    const { plan, files } = planFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' });
    const cni = JSON.parse(file(files, WIN.cniConf)) as {
      delegate: { AdditionalArgs: { Value: { Type: string; Settings: Record<string, unknown> } }[] };
    };
    const byType = (t: string) =>
      cni.delegate.AdditionalArgs.filter((a) => a.Value.Type === t).map((a) => a.Value.Settings);
    assert.deepEqual(byType('OutBoundNAT'), [{ Exceptions: ['10.244.0.0/16', '10.96.0.0/12'] }]);
    assert.ok(
      !natExceptions(modelFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' })).includes(
        plan.cluster.network.nodeCidr,
      ),
    );
    assert.deepEqual(byType('SDNRoute'), [{ DestinationPrefix: '10.96.0.0/12', NeedEncap: true }]);
    assert.deepEqual(byType('ProviderAddress'), [{ ProviderAddress: '10.0.0.3' }]);
  });
  it('host-gw: sdnbridge with forceBridgeGateway, node /32 route, no ProviderAddress', () => {
    const { files } = planFor({ k8s: '1.36', os: 'windows-2022', backend: 'host-gw' });
    const text = file(files, WIN.cniConf);
    const cni = JSON.parse(text) as {
      delegate: {
        optionalFlags: Record<string, boolean>;
        AdditionalArgs: { Value: { Type: string; Settings: Record<string, unknown> } }[];
      };
    };
    assert.deepEqual(cni.delegate.optionalFlags, { forceBridgeGateway: true });
    const routes = cni.delegate.AdditionalArgs.filter((a) => a.Value.Type === 'SDNRoute').map(
      (a) => a.Value.Settings['DestinationPrefix'],
    );
    assert.deepEqual(routes, ['10.96.0.0/12', '10.0.0.3/32']);
    assert.ok(!text.includes('ProviderAddress'));
    assert.ok(!text.includes('10.0.0.0/24'));
  });
});
