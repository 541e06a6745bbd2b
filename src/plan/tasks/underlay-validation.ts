// task-run-validations, underlay part: before anything is installed, every
// existing node pings each peer, sends don't-fragment packets of the planned
// node MTU, and with host-gw checks that no router sits between it and a peer. The failing pair
// is named on stderr, so `kubemix up` stops early saying which one. The probe
// commands are `kubemix verify`'s (verify/underlay/scripts.ts); its UDP probe
// needs a listener started on the peer first and runs in `kubemix verify` only.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { psQuote, shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';
import * as probe from '../../verify/underlay/scripts.js';
import { powershell, sh, task, taskId } from '../task.js';
import type { Task } from '../types.js';

/** IPv4 (20) + ICMP (8) header bytes: an echo of node MTU less 28 fills the MTU. */
const ICMP_OVERHEAD = 28;

export interface UnderlayCheck {
  readonly what: string;
  readonly linux: probe.ProbeCommand;
  readonly windows: probe.ProbeCommand;
  /** The start of the marker line that means success. */
  readonly ok: string;
  readonly failure: string;
}

function checks(model: ClusterModel, node: PlanNode): UnderlayCheck[] {
  const mtu = model.cluster.network.nodeMtu;
  const out: UnderlayCheck[] = [];
  for (const peer of model.nodes.filter((n) => n !== node)) {
    const pair = `${node.name} → ${peer.name} (${peer.ip})`;
    out.push({
      what: `ping ${pair}`,
      linux: probe.linuxPing(peer.ip),
      windows: probe.windowsPing(peer.ip),
      ok: `${probe.MARK} ok`,
      failure: 'no ICMP echo reply: the peer is down, unroutable, or a firewall drops ICMP',
    });
    out.push({
      what: `mtu-${mtu} ${pair}`,
      linux: probe.linuxPing(peer.ip, mtu - ICMP_OVERHEAD),
      windows: probe.windowsPing(peer.ip, mtu - ICMP_OVERHEAD),
      ok: `${probe.MARK} ok`,
      failure: `don't-fragment packets of ${mtu} bytes do not pass: a link on the path has a smaller MTU`,
    });
    if (model.overlay.vxlan === undefined)
      out.push({
        what: `l2-segment ${pair}`,
        linux: probe.linuxRoute(peer.ip),
        windows: probe.windowsRoute(peer.ip),
        ok: `${probe.MARK} route ${peer.ip} dev `,
        failure: 'a router sits between the nodes: host-gw needs every node on one L2 segment',
      });
  }
  // No DNS check here: before install nothing needs to serve the API name yet
  // (kubemix writes it into each node's hosts block, or the services node's
  // DNS serves it once installed); `kubemix verify` checks it afterwards.
  return out;
}

/** Runs each check's probe, names every failing one on stderr, exits 1 if any failed. */
export function linuxScript(cs: readonly UnderlayCheck[]): ShellText {
  const body = cs.map((c) => {
    // A Linux probe of verify/underlay/scripts.ts, built there with the `shell` template (each value escaped
    // for where it lands) and kept as its text: it goes in again as code, unchanged.
    // eslint-disable-next-line kubemix/shell-code -- that template's output, not a value
    const probe = shellCode(c.linux.script);
    const test = shell`printf '%s\\n' "$out" | grep -q ${`^${c.ok}`}`;
    return shell`out=$(\n${probe})\n${test} || { echo ${`underlay ${c.what}: ${c.failure}`} >&2; printf '%s\\n' "$out" >&2; fail=1; }`;
  });
  return shell`fail=0\n${shellLines(body)}\nexit $fail\n`;
}

export function windowsScript(cs: readonly UnderlayCheck[]): string {
  const body = cs.map((c) => {
    const inner = c.windows.script.replace(
      /^\$ErrorActionPreference = 'Stop'\n\$ProgressPreference = 'SilentlyContinue'\n/,
      '',
    );
    const test = `@($lines | Where-Object { $_.StartsWith(${psQuote(c.ok)}) }).Count -gt 0`;
    return `$lines = @(& {\n${inner}})\nif (-not (${test})) {\n  [Console]::Error.WriteLine(${psQuote(`underlay ${c.what}: ${c.failure}`)})\n  $failed = $true\n}`;
  });
  return `$ErrorActionPreference = 'Stop'\n$ProgressPreference = 'SilentlyContinue'\n$failed = $false\n${body.join('\n')}\nif ($failed) { exit 1 }\n`;
}

/** One underlay task per existing node, after its facts are gathered. */
export function underlayValidationTasks(model: ClusterModel): Task[] {
  return model.nodes.map((node) => {
    const cs = checks(model, node);
    return task({
      stage: 'task-run-validations',
      host: node.name,
      name: 'underlay',
      description: `check ${node.name} reaches ${model.nodes.length - 1} peers (ICMP, MTU ${model.cluster.network.nodeMtu}${model.overlay.vxlan === undefined ? ', one L2 segment' : ''})`,
      after: [taskId('task-gather-facts', node.name, 'facts')],
      check: null,
      apply: node.osFamily === 'windows' ? powershell(windowsScript(cs)) : sh(linuxScript(cs), 'user'),
      timeoutSeconds: 120,
    });
  });
}
