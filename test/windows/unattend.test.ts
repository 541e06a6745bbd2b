// Autounattend.xml and the first-boot script of a Windows VM: well-formed XML
// in the unattend namespace with the passes and components Setup expects,
// the computer name, the SSH key references and the network; no secret
// value; golden files per Windows build. Validated statically only.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { driverFor } from '../../src/drivers/index.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import type { PlanNode } from '../../src/model/types.js';
import { renderUnattend, UNATTEND_MEDIA } from '../../src/render/windows/unattend.js';
import { readSpec } from '../../src/spec/read.js';
import { specText, type Combo } from './fixtures.js';
import { lintPowerShell, parseErrors, secretProblems } from './powershell.js';

const GOLDEN_DIR = fileURLToPath(new URL('../../../test/golden/windows/', import.meta.url));
type Os = Combo['os'];

function modelFor(os: Os, dhcp: boolean): ClusterModel {
  const text = `${specText({ k8s: '1.36', os, backend: 'vxlan' })}${dhcp ? '' : '  services:\n    dhcp: false\n'}`;
  return resolveModel(readSpec({ kind: 'file', path: `unattend-${os}.yaml`, text }));
}

/** win-01's install media files, by their path on the media (placed where the driver builds the media). */
function media(model: ClusterModel): Map<string, { content: string; mode: string }> {
  const { plan, files } = assemblePlan(model);
  const node = model.nodes.find((n) => n.name === 'win-01') ?? assert.fail('win-01');
  const place = driverFor(model.cluster.driver).installMedia(node, model) ?? assert.fail('no install media place');
  const mine = files.filter((f) => f.node === place.host && f.remotePath.startsWith(`${place.dir}/`));
  // Only the guest task that builds the media places them, and only when it applies (it deletes them).
  for (const t of plan.tasks) {
    const placed = t.uploads.filter((u) => mine.some((f) => u.artifact === `${f.node}:${f.remotePath}`));
    if (placed.length === 0) continue;
    assert.equal(t.name, 'guest-win-01', `${t.id} uploads install media`);
    assert.equal(t.uploadsOnApply, true, `${t.id} places install media only when it applies`);
    assert.equal(placed.length, mine.length);
  }
  return new Map(mine.map((f) => [f.remotePath.slice(place.dir.length + 1), { content: f.content, mode: f.mode }]));
}

type Xml = Record<string, unknown>;
const ARRAYS = new Set([
  'settings',
  'component',
  'PathAndCredentials',
  'CreatePartition',
  'ModifyPartition',
  'RunSynchronousCommand',
  'Interface',
  'IpAddress',
]);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  isArray: (name) => ARRAYS.has(name),
});

function parse(xml: string): Xml {
  assert.equal(XMLValidator.validate(xml), true, 'well-formed XML');
  return (parser.parse(xml) as { unattend: Xml }).unattend;
}

function components(doc: Xml, pass: string): Map<string, Xml> {
  const settings = (doc['settings'] as Xml[]).find((s) => s['@_pass'] === pass);
  assert.ok(settings, `pass ${pass}`);
  return new Map((settings['component'] as Xml[]).map((c) => [String(c['@_name']), c]));
}

function get(c: Xml | undefined, ...path: string[]): unknown {
  return path.reduce<unknown>((x, k) => (x as Xml | undefined)?.[k], c);
}

describe('Autounattend.xml', () => {
  for (const os of ['windows-2022', 'windows-2025'] as const) {
    const dir = os === 'windows-2022' ? '2k22' : '2k25';
    it(`${os}: namespace, passes and components Setup expects`, () => {
      const doc = parse(media(modelFor(os, true)).get(UNATTEND_MEDIA.answerFile)?.content ?? '');
      assert.equal(doc['@_xmlns'], 'urn:schemas-microsoft-com:unattend');
      assert.deepEqual(
        (doc['settings'] as Xml[]).map((s) => s['@_pass']),
        ['windowsPE', 'offlineServicing', 'specialize', 'oobeSystem'],
      );
      for (const s of doc['settings'] as Xml[]) {
        for (const c of s['component'] as Xml[]) {
          assert.deepEqual(
            [c['@_processorArchitecture'], c['@_publicKeyToken'], c['@_language'], c['@_versionScope']],
            ['amd64', '31bf3856ad364e35', 'neutral', 'nonSxS'],
            String(c['@_name']),
          );
        }
      }
      const pe = components(doc, 'windowsPE');
      assert.deepEqual(
        [...pe.keys()],
        [
          'Microsoft-Windows-PnpCustomizationsWinPE',
          'Microsoft-Windows-International-Core-WinPE',
          'Microsoft-Windows-Setup',
        ],
      );
      const drivers = (
        get(pe.get('Microsoft-Windows-PnpCustomizationsWinPE'), 'DriverPaths', 'PathAndCredentials') as Xml[]
      ).map((p) => p['Path']);
      for (const d of ['viostor', 'vioscsi', 'NetKVM'])
        assert.ok(drivers.includes(`E:\\${d}\\${dir}\\amd64`), `${d} for ${dir}`);
      const setup = pe.get('Microsoft-Windows-Setup');
      const parts = get(setup, 'DiskConfiguration', 'Disk', 'CreatePartitions', 'CreatePartition') as Xml[];
      assert.deepEqual(
        parts.map((p) => p['Type']),
        ['EFI', 'MSR', 'Primary'],
      );
      const image = get(setup, 'ImageInstall', 'OSImage') as Xml;
      assert.equal(
        get(image, 'InstallFrom', 'MetaData', 'Value'),
        `Windows Server ${os.slice(-4)} SERVERDATACENTERCORE`,
      );
      assert.deepEqual(get(image, 'InstallTo'), { DiskID: '0', PartitionID: '3' });
      const specialize = components(doc, 'specialize');
      assert.equal(get(specialize.get('Microsoft-Windows-Shell-Setup'), 'ComputerName'), 'win-01');
      assert.equal(get(specialize.get('Microsoft-Windows-Shell-Setup'), 'TimeZone'), 'UTC');
      const oobe = components(doc, 'oobeSystem');
      assert.ok(oobe.has('Microsoft-Windows-International-Core'));
      assert.equal(
        get(oobe.get('Microsoft-Windows-Shell-Setup'), 'UserAccounts', 'AdministratorPassword', 'Value'),
        '{{secret:windows-admin-password}}',
      );
    });
  }

  it("DHCP (a reservation by MAC in the driver's network): no static address", () => {
    const doc = parse(renderUnattend(modelFor('windows-2022', true), win(modelFor('windows-2022', true))));
    const specialize = components(doc, 'specialize');
    assert.ok(!specialize.has('Microsoft-Windows-TCPIP'));
    assert.ok(!specialize.has('Microsoft-Windows-DNS-Client'));
  });

  it('static address from the model on the NIC with the planned MAC', () => {
    const model = modelFor('windows-2025', false);
    const node = win(model);
    const specialize = components(parse(renderUnattend(model, node)), 'specialize');
    const iface = (get(specialize.get('Microsoft-Windows-TCPIP'), 'Interfaces', 'Interface') as Xml[])[0];
    const mac = (node.mac ?? '').toUpperCase().replace(/:/g, '-');
    assert.match(mac, /^52-54-00(-[0-9A-F]{2}){3}$/);
    assert.equal(get(iface, 'Identifier'), mac);
    assert.equal(get(iface, 'Ipv4Settings', 'DhcpEnabled'), 'false');
    assert.equal((get(iface, 'UnicastIpAddresses', 'IpAddress') as Xml[])[0]?.['#text'], `${node.ip}/24`);
    assert.equal(get(iface, 'Routes', 'Route', 'NextHopAddress'), model.cluster.network.gateway);
    const dns = (get(specialize.get('Microsoft-Windows-DNS-Client'), 'Interfaces', 'Interface') as Xml[])[0];
    assert.equal(get(dns, 'Identifier'), mac);
    assert.equal(
      (get(dns, 'DNSServerSearchOrder', 'IpAddress') as Xml[])[0]?.['#text'],
      model.nodes.find((n) => n.role === 'services')?.ip,
    );
  });

  it('refuses a computer name longer than 15 characters', () => {
    const model = modelFor('windows-2022', true);
    assert.throws(() => renderUnattend(model, { ...win(model), name: 'windows-worker-01' }), /computer name/);
  });

  it('only VMs kubemix installs get install media', () => {
    const text = readFileSync(new URL('../../../examples/existing-host-gw.yaml', import.meta.url), 'utf8');
    const { files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'existing-host-gw.yaml', text })));
    assert.deepEqual(
      files.filter((f) => f.remotePath.endsWith('Autounattend.xml')),
      [],
    );
  });
});

describe('first-boot script (SetupComplete.cmd → kubemix-setup.ps1)', () => {
  const files = media(modelFor('windows-2022', true));
  const script = files.get(UNATTEND_MEDIA.setupScript)?.content ?? '';

  it('parses and passes the PowerShell rules', () => {
    assert.deepEqual(parseErrors(script), []);
    assert.deepEqual(lintPowerShell(script), []);
    assert.match(
      files.get(UNATTEND_MEDIA.setupComplete)?.content ?? '',
      /-File "%WINDIR%\\Setup\\Scripts\\kubemix-setup\.ps1"/,
    );
  });

  it('OpenSSH with our host key, PowerShell as shell, the login key with a private ACL, 22 from the node network only, then shutdown', () => {
    assert.match(script, /Add-WindowsCapability -Online -Name 'OpenSSH\.Server~~~~0\.0\.1\.0'/);
    assert.match(script, /Set-Service -Name 'sshd' -StartupType Automatic/);
    assert.match(
      script,
      /'HKLM:\\SOFTWARE\\OpenSSH' -Name 'DefaultShell' -Value 'C:\\Windows\\System32\\WindowsPowerShell\\v1\.0\\powershell\.exe'/,
    );
    assert.match(
      script,
      /\{\{secret:ssh-host-key-win-01\}\}\n'@\nWrite-KubemixFile -Path 'C:\\ProgramData\\ssh\\ssh_host_ed25519_key'/,
    );
    assert.match(
      script,
      /\{\{secret:cluster-ssh-public-key\}\}\n'@\nWrite-KubemixFile -Path 'C:\\ProgramData\\ssh\\administrators_authorized_keys'/,
    );
    assert.match(script, /icacls\.exe \$Path \/inheritance:r \/grant '\*S-1-5-32-544:F' '\*S-1-5-18:F'/);
    assert.match(script, /Set-NetFirewallRule -Name 'OpenSSH-Server-In-TCP' -RemoteAddress '10\.0\.0\.0\/24'/);
    assert.match(script, /shutdown\.exe \/s /);
    assert.ok(
      script.indexOf("Set-KubemixPrivateAcl -Path 'C:\\ProgramData\\ssh\\ssh_host_ed25519_key'") <
        script.indexOf("Start-Service -Name 'sshd'"),
      'host key in place before sshd first starts',
    );
  });

  it('secrets only as references; every media file is 0600 (root-only on the hypervisor)', () => {
    for (const [path, f] of files) {
      assert.deepEqual(secretProblems(f.content), [], path);
      assert.equal(f.mode, '0600', path);
    }
    assert.equal(files.get(UNATTEND_MEDIA.answerFile)?.mode, '0600');
    assert.equal(files.get(UNATTEND_MEDIA.setupScript)?.mode, '0600');
  });
});

describe('install media golden files', () => {
  for (const [os, dhcp] of [
    ['windows-2022', true],
    ['windows-2025', false],
  ] as const) {
    const name = `unattend-${os}-${dhcp ? 'dhcp' : 'static'}`;
    it(name, () => {
      const render = (): string =>
        [...media(modelFor(os, dhcp))]
          .map(([p, f]) => `### file ${p} (${f.mode})\n${f.content.trimEnd()}\n`)
          .join('\n');
      const actual = render();
      const path = `${GOLDEN_DIR}${name}.txt`;
      if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(path)) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(path, actual);
      }
      assert.equal(
        actual,
        readFileSync(path, 'utf8'),
        `${path} differs: rerun with UPDATE_GOLDEN=1 after checking the change`,
      );
      assert.equal(render(), actual, 'rendering is deterministic');
    });
  }
});

function win(model: ClusterModel): PlanNode {
  const node = model.nodes.find((n) => n.name === 'win-01');
  assert.ok(node);
  return node;
}
