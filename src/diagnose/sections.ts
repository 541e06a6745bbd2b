// What `kubemix diagnose` collects from each node: named sections, each one
// read-only command, run in one script per node whose output is split back
// into sections by marker lines. Pure: the model in, script text out; and
// the collected text in, sections out.
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import { CALICO_WINDOWS } from '../matrix/index.js';
import { hnsNetworkName } from '../render/windows/network.js';
import { WIN } from '../render/windows/paths.js';
import { HNS_FUNCTIONS, q } from '../render/windows/ps.js';
import { NAMED_CONF } from '../render/services/bind.js';
import { DNSMASQ_CONFIG } from '../render/services/dnsmasq.js';
import { servicesFacts } from '../render/services/facts.js';
import { HAPROXY_CONFIG } from '../render/services/haproxy.js';
import { REGISTRY_PATHS } from '../render/services/registry.js';
import { shell, shellLines, type ShellText } from '../util/escape/index.js';
import { linuxCredentials, windowsCredentials } from '../verify/underlay/credential-scripts.js';
import {
  apiCniSections,
  CALICO_LINUX_VXLAN,
  KUBECTL,
  linuxCalicoSections,
  windowsCniSections,
} from './cni-sections.js';
import type { PowerShellSection, Section } from './types.js';

export type { PowerShellSection, Section } from './types.js';

export const MARKER = '=== kubemix-section ';

/**
 * A whole script made elsewhere as text (verify's credential listing, shared
 * with the credentials probe), run by its own `sh -c` with the text as that
 * one quoted argument: it goes in as a value, never spliced in as code.
 */
function ownShell(script: string | ShellText): ShellText {
  return shell`sh -c ${String(script)}`;
}

export function linuxSections(model: ClusterModel, node: PlanNode, api: boolean): Section[] {
  const calico = model.overlay.plugin === 'calico';
  // flannel's link is named like its Windows network (flannel.<VNI>, cbr0); Calico's is vxlan.calico.
  const link = calico ? CALICO_LINUX_VXLAN : hnsNetworkName(model.overlay);
  const own: Section[] = [
    { name: 'services', command: shell`systemctl is-active kubelet containerd` },
    { name: 'kubelet-log', command: shell`journalctl -u kubelet --no-pager -n 300` },
    { name: 'containerd-log', command: shell`journalctl -u containerd --no-pager -n 200` },
    { name: 'cni-config', command: shell`for f in /etc/cni/net.d/*; do echo "# $f"; cat "$f"; done` },
    ...(calico ? linuxCalicoSections() : [{ name: 'subnet-env', command: shell`cat /run/flannel/subnet.env` }]),
    { name: 'addresses', command: shell`ip addr` },
    { name: 'routes', command: shell`ip route` },
    { name: 'vxlan-link', command: shell`ip -d link show ${link}` },
    { name: 'bridge-fdb', command: shell`bridge fdb show dev ${link}` },
    { name: 'dns', command: shell`cat /etc/resolv.conf` },
    { name: 'credentials', command: ownShell(linuxCredentials(node.role === 'control-plane').script) },
  ];
  if (!api || node.role !== 'control-plane') return own;
  return [
    ...own,
    { name: 'cluster-nodes', command: shell`${KUBECTL} get nodes -o wide` },
    { name: 'cluster-services', command: shell`${KUBECTL} get services --all-namespaces -o wide` },
    { name: 'cluster-pods', command: shell`${KUBECTL} get pods --all-namespaces -o wide` },
    {
      name: 'cluster-events',
      command: shell`${KUBECTL} get events --all-namespaces --field-selector type=Warning --sort-by=.lastTimestamp`,
    },
    ...apiCniSections(model),
  ];
}

/** A config test's output and, last, `exit N`: the services-config signature reads the code. */
function configTest(command: ShellText): ShellText {
  return shell`${command}; echo "exit $?"`;
}

/**
 * The services node: each service kubemix switched on, its state, its own
 * config test (`haproxy -c`, `named-checkconf -z`, `dnsmasq --test`; the
 * registry has none, so its config is shown), its recent log, and what
 * listens. The registry's key and htpasswd are never read.
 */
export function servicesSections(model: ClusterModel): Section[] {
  const t = servicesFacts(model)?.toggles;
  if (t === undefined) return [];
  const on = [
    ...(t.loadBalancer ? ['haproxy'] : []),
    ...(t.dns ? ['named'] : []),
    ...(t.registry ? ['docker-registry'] : []),
    ...(t.dhcp ? ['dnsmasq'] : []),
  ];
  const log = (unit: string): Section => ({
    name: `${unit}-log`,
    command: shell`journalctl -u ${unit} --no-pager -n 200`,
  });
  return [
    { name: 'service-states', command: shell`for s in ${on}; do echo "$s $(systemctl is-active "$s")"; done` },
    ...(t.loadBalancer ? [{ name: 'haproxy-check', command: configTest(shell`haproxy -c -f ${HAPROXY_CONFIG}`) }] : []),
    ...(t.dns ? [{ name: 'named-check', command: configTest(shell`named-checkconf -z ${NAMED_CONF}`) }] : []),
    ...(t.dhcp
      ? [
          { name: 'dnsmasq-check', command: configTest(shell`dnsmasq --test`) },
          { name: 'dnsmasq-config', command: shell`cat ${DNSMASQ_CONFIG}` },
          { name: 'dhcp-leases', command: shell`cat /var/lib/misc/dnsmasq.leases` },
        ]
      : []),
    ...(t.registry ? [{ name: 'registry-config', command: shell`cat ${REGISTRY_PATHS.config}` }] : []),
    ...on.map(log),
    { name: 'listening', command: shell`ss -ltnup` },
  ];
}

function lastLog(service: string): string {
  return `Get-ChildItem -LiteralPath ${q(`${WIN.logs}\\${service}`)} -Filter *.log | Sort-Object LastWriteTime | Select-Object -Last 1 | ForEach-Object { Get-Content -LiteralPath $_.FullName -Tail 200 }`;
}

/** The Windows services kubemix installs: flanneld and kube-proxy are HostProcess pods the kubelet runs. */
function windowsServiceNames(_model: ClusterModel): string[] {
  return ['containerd', 'kubelet'];
}

/**
 * A Windows worker's sections. With Calico there is no flanneld, subnet.env
 * or net-conf.json; the CNI config is the one calico-node-windows wrote, and
 * its pod's and CNI plugin's logs are added. HostProcess flannel: flanneld's
 * and kube-proxy's logs are their pods'.
 */
export function windowsSections(model: ClusterModel): PowerShellSection[] {
  const hns = (path: string): string => `ConvertTo-Json -Depth 8 @(Invoke-KubemixHns -Method 'GET' -Path ${q(path)})`;
  const calico = model.overlay.plugin === 'calico';
  const services = windowsServiceNames(model);
  const flannel: PowerShellSection[] = calico
    ? []
    : [
        { name: 'subnet-env', command: `Get-Content -LiteralPath ${q(WIN.subnetEnv)}` },
        { name: 'net-conf', command: `Get-Content -LiteralPath ${q(WIN.flannelNetConf)}` },
      ];
  const cniConf = calico ? `${WIN.cniConfDir}\\${CALICO_WINDOWS.cniConfName}` : WIN.cniConf;
  return [
    {
      name: 'services',
      command: `Get-Service -Name ${services.map(q).join(', ')} -ErrorAction SilentlyContinue | ForEach-Object { "$($_.Name) $($_.Status)" }`,
    },
    { name: 'hns-networks', command: hns('/networks/') },
    { name: 'hns-endpoints', command: hns('/endpoints/') },
    { name: 'hns-policylists', command: hns('/policylists/') },
    { name: 'hns-loadbalancers', command: `& hnsdiag.exe list loadbalancers` },
    ...(services.includes('flanneld') ? [{ name: 'flanneld-log', command: lastLog('flanneld') }] : []),
    { name: 'kubelet-log', command: lastLog('kubelet') },
    ...(services.includes('kube-proxy') ? [{ name: 'kube-proxy-log', command: lastLog('kube-proxy') }] : []),
    { name: 'containerd-log', command: lastLog('containerd') },
    ...windowsCniSections(model),
    {
      name: 'hotfixes',
      command: `Get-HotFix | Sort-Object -Property InstalledOn -Descending | Select-Object -First 10 | ForEach-Object { "$($_.HotFixID) $($_.Description) $(if ($_.InstalledOn) { $_.InstalledOn.ToString('yyyy-MM-dd') })" }`,
    },
    {
      name: 'os-build',
      command: `$cv = Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion'; "$($cv.CurrentBuild).$($cv.UBR)"`,
    },
    ...flannel,
    { name: 'cni-config', command: `Get-Content -LiteralPath ${q(cniConf)}` },
    { name: 'routes', command: 'Get-NetRoute -AddressFamily IPv4 | Format-Table -AutoSize | Out-String -Width 200' },
    {
      name: 'dns',
      command: 'Get-DnsClientServerAddress -AddressFamily IPv4 | Format-Table -AutoSize | Out-String -Width 200',
    },
    // In its own scope: its $ErrorActionPreference stays its own.
    { name: 'credentials', command: `& {\n${windowsCredentials(model.overlay.plugin === 'flannel').script}}` },
  ];
}

/** A Linux section runs at most this long, so one hanging command does not eat the node's whole budget. */
export const SECTION_TIMEOUT_SECONDS = 20;

/**
 * The Linux collector: prints every section after its marker; each section's
 * command run by `sh -c` as one quoted word (its text, as a value), bounded
 * in time, so a failing or hanging command does not stop the others.
 */
export function collectShellScript(sections: readonly Section[], sectionTimeout = SECTION_TIMEOUT_SECONDS): ShellText {
  return shellLines(
    sections.map(
      (s) => shell`echo ${`${MARKER}${s.name}`}\ntimeout -k 2 ${sectionTimeout} sh -c ${s.command.text} 2>&1 || true`,
    ),
  );
}

/** The Windows collector: every section after its marker, each in its own try. */
export function collectPowerShellScript(sections: readonly PowerShellSection[]): string {
  return `$ErrorActionPreference = 'Continue'
${HNS_FUNCTIONS}${sections
    .map(
      (s) =>
        `Write-Output ${q(`${MARKER}${s.name}`)}\ntry { ${s.command} 2>&1 | Out-String -Width 200 } catch { "$_" }`,
    )
    .join('\n')}
`;
}

/** A node's collection script as text, by its shell. */
export function collectScript(shell: 'sh', sections: readonly Section[], sectionTimeout?: number): string;
export function collectScript(shell: 'powershell', sections: readonly PowerShellSection[]): string;
export function collectScript(
  shell: 'sh' | 'powershell',
  sections: readonly Section[] | readonly PowerShellSection[],
  sectionTimeout = SECTION_TIMEOUT_SECONDS,
): string {
  return shell === 'sh'
    ? collectShellScript(sections as readonly Section[], sectionTimeout).text
    : collectPowerShellScript(sections as readonly PowerShellSection[]);
}

/** The collected text split back into its sections (text before the first marker is dropped). */
export function splitSections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | undefined;
  let lines: string[] = [];
  const flush = (): void => {
    if (current !== undefined) out.set(current, lines.join('\n').trim());
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith(MARKER)) {
      flush();
      current = line.slice(MARKER.length).trim();
      lines = [];
    } else lines.push(line);
  }
  flush();
  return out;
}
