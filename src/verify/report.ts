// How verify's results are shown: a matrix per probe (rows sources, columns
// targets), the failures with layer, probe, source, target, command, output
// and likely cause, a summary line, a JSON document and JUnit XML. Pure.
import type { CheckResult } from './types.js';

export interface Summary {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  /** Checks that pass for now and will not for long (present only when there are any). */
  readonly warned?: number;
}

export function summarize(results: readonly CheckResult[]): Summary {
  const count = (s: CheckResult['status']): number => results.filter((r) => r.status === s).length;
  const warned = count('warn');
  return { passed: count('pass'), failed: count('fail'), skipped: count('skip'), ...(warned > 0 ? { warned } : {}) };
}

export function summaryLine(s: Summary): string {
  const warned = s.warned === undefined ? '' : `, ${s.warned} warned`;
  return `${s.passed} checks passed, ${s.failed} failed, ${s.skipped} skipped${warned}`;
}

const CELL = { pass: '✓', warn: '!', fail: '✗' } as const;
const SELF = '·';

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - [...text].length));
}

/** `values` in the order of `order` (node order), the others after them as first seen. */
function ordered(values: readonly string[], order: readonly string[]): string[] {
  const rank = (v: string): number => (order.includes(v) ? order.indexOf(v) : order.length);
  return unique(values).sort((a, b) => rank(a) - rank(b));
}

/** One probe's grid; skipped cells carry a footnote number: `–1` … with the reasons below. */
function grid(title: string, rs: readonly CheckResult[], order: readonly string[]): string[] {
  const sources = ordered(
    rs.map((r) => r.source),
    order,
  );
  const targets = ordered(
    rs.map((r) => r.target),
    order,
  );
  const reasons = unique(rs.filter((r) => r.status === 'skip').map((r) => r.detail));
  const cell = (source: string, target: string): string => {
    const r = rs.find((x) => x.source === source && x.target === target);
    if (r === undefined) return source === target ? SELF : '';
    return r.status === 'skip' ? `–${reasons.indexOf(r.detail) + 1}` : CELL[r.status];
  };
  const rows = [['', ...targets], ...sources.map((s) => [s, ...targets.map((t) => cell(s, t))])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => [...(row[i] ?? '')].length)));
  const lines = rows.map((row) =>
    row
      .map((c, i) => pad(c, widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  return [title, ...lines.map((l) => `  ${l}`), ...reasons.map((r, i) => `  –${i + 1} skipped: ${r}`)];
}

/** What each probe checks, for the matrix titles (and `kubemix verify --help`). */
export const PROBE_TITLES: readonly [RegExp, string][] = [
  [/^ssh$/, 'SSH from the deployer: commands run as root on the node (the cells from a node it fails are skipped)'],
  [/^ping$/, 'IP reachability (ICMP echo)'],
  [/^udp-(\d+)$/, 'VXLAN port: a datagram to a listener on the target, UDP $1'],
  [/^vxlan$/, 'VXLAN path after install: ICMP echo to the target’s VTEP through the CNI’s device'],
  [/^mtu-(\d+)$/, "path MTU: don't-fragment packets of $1 bytes"],
  [/^tcp-6443$/, 'API server port 6443 (api-lb: through the load balancer; control-plane nodes)'],
  [/^tcp-10250$/, 'kubelet port 10250'],
  [/^dns$/, 'DNS: the name resolves to the planned addresses'],
  [/^clock$/, 'clock skew against the deployer'],
  [/^l2-segment$/, 'host-gw: peer on the same L2 segment (no router hop)'],
  [
    /^credentials$/,
    "credentials on the node (kubelet certificates, pods' tokens, kubeadm's certificates): ! = one expires soon, ✗ = one has expired",
  ],
];

/** Layer 2's probes (rows: source node, or `deployer`/`cluster`; columns: targets). */
export const CLUSTER_TITLES: readonly [RegExp, string][] = [
  [/^api$/, 'the API server answers with the kubeconfig'],
  [/^node$/, 'nodes: registered and Ready, OS/arch, windows-build label, labels, taints, kubelet skew'],
  [/^system-pods$/, 'system pods: the CNI and kube-proxy Ready on the node'],
  [/^coredns$/, 'CoreDNS Ready, on Linux nodes'],
  [/^runtimeclass$/, 'RuntimeClasses (one per Windows build)'],
  [/^namespace$/, "the probe namespace kubemix-verify (an earlier run's is removed first)"],
  [/^pod-ip$/, 'pod → pod by IP (the echo pod on the target node; same node on the diagonal)'],
  [/^svc-ip$/, 'pod → Service ClusterIP (Linux-, Windows-, both-backed)'],
  [/^svc-dns$/, 'pod → Service by DNS name'],
  [/^pod-dns$/, 'DNS: kubernetes.default resolved in the pod'],
  [/^host-pod$/, 'host → pod by IP (a hostNetwork pod on Linux, a HostProcess pod on Windows)'],
  [/^egress$/, 'egress: TCP connect from a pod on the node to a target outside the cluster (--egress)'],
  [/^nodeport$/, 'NodePort from the deployer through the node'],
];

const ALL_TITLES = [...PROBE_TITLES, ...CLUSTER_TITLES];

function probeRank(probe: string): number {
  const i = ALL_TITLES.findIndex(([re]) => re.test(probe));
  return i < 0 ? ALL_TITLES.length : i;
}

function probeTitle(probe: string): string {
  for (const [re, text] of ALL_TITLES) if (re.test(probe)) return probe.replace(re, text);
  return probe;
}

function failureText(r: CheckResult): string[] {
  const lines = [`${r.status === 'warn' ? '!' : '✗'} ${r.layer} ${r.probe} ${r.source} → ${r.target}: ${r.detail}`];
  if (r.command !== undefined) lines.push(`    command: ${r.command}`);
  if (r.output !== undefined && r.output !== '' && r.status === 'fail')
    lines.push('    output:', ...r.output.split('\n').map((l) => `      ${l}`));
  if (r.cause !== undefined) lines.push(`    ${r.status === 'warn' ? 'to do' : 'likely cause'}: ${r.cause}`);
  return lines;
}

/** The matrices (rows and columns in `order`, the node order), the failures in detail and the summary line. */
export function matrixText(results: readonly CheckResult[], order: readonly string[] = []): string {
  const out: string[] = [];
  for (const layer of unique(results.map((r) => r.layer))) {
    const inLayer = results.filter((r) => r.layer === layer);
    const probes = unique(inLayer.map((r) => r.probe)).sort((a, b) => probeRank(a) - probeRank(b));
    for (const probe of probes)
      out.push(
        ...grid(
          `${layer}: ${probeTitle(probe)}`,
          inLayer.filter((r) => r.probe === probe),
          order,
        ),
        '',
      );
  }
  const warnings = results.filter((r) => r.status === 'warn');
  if (warnings.length > 0) out.push('warnings:', ...warnings.flatMap(failureText), '');
  const failures = results.filter((r) => r.status === 'fail');
  if (failures.length > 0) out.push('failures:', ...failures.flatMap(failureText), '');
  out.push(summaryLine(summarize(results)));
  return `${out.join('\n')}\n`;
}

export function reportDocument(results: readonly CheckResult[]): {
  ok: boolean;
  summary: Summary;
  checks: readonly CheckResult[];
} {
  const summary = summarize(results);
  return { ok: summary.failed === 0, summary, checks: results };
}

function xml(text: string): string {
  // XML 1.0 allows no C0 controls but tab, newline and carriage return (XML 1.0 §2.2 Char).
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** JUnit XML: one testsuite per layer, one testcase per check (classname `layer.probe`, name `source → target`). */
export function junitXml(results: readonly CheckResult[]): string {
  const suites = unique(results.map((r) => r.layer)).map((layer) => {
    const rs = results.filter((r) => r.layer === layer);
    const s = summarize(rs);
    const cases = rs.map((r) => {
      const open = `    <testcase classname="${xml(`${r.layer}.${r.probe}`)}" name="${xml(`${r.source} → ${r.target}`)}" time="0"`;
      if (r.status === 'pass') return `${open}/>`;
      if (r.status === 'warn')
        return `${open}>\n      <system-out>${xml(`warning: ${r.detail}\nto do: ${r.cause ?? ''}`)}</system-out>\n    </testcase>`;
      if (r.status === 'skip') return `${open}>\n      <skipped message="${xml(r.detail)}"/>\n    </testcase>`;
      const body = [
        `command: ${r.command ?? ''}`,
        `output: ${r.output ?? ''}`,
        `likely cause: ${r.cause ?? 'unknown'}`,
      ];
      return `${open}>\n      <failure message="${xml(r.detail)}" type="${xml(r.probe)}">${xml(body.join('\n'))}</failure>\n    </testcase>`;
    });
    return [
      `  <testsuite name="kubemix verify ${layer}" tests="${xml(String(rs.length))}" failures="${xml(String(s.failed))}" errors="0" skipped="${xml(String(s.skipped))}" time="0">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const all = summarize(results);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="kubemix verify" tests="${xml(String(results.length))}" failures="${xml(String(all.failed))}" errors="0" time="0">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
