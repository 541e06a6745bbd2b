// The human view of a plan: cluster line, node table, tasks per stage and host.
import { vxlanOf } from '../model/settings.js';
import type { Plan } from '../plan/types.js';
import { STAGES } from '../plan/types.js';

export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function renderPlanText(plan: Plan): string {
  const c = plan.cluster;
  const v = c.versions;
  const vxlan = vxlanOf(c.cni);
  const lines = [
    `cluster ${c.name}.${c.domain} (${c.driver})  Kubernetes ${v.kubernetes ?? '?'}  containerd ${v.containerd ?? '?'}`,
    `network nodes ${c.network.nodeCidr} (gateway ${c.network.gateway}, MTU ${c.network.nodeMtu})  pods ${c.network.podCidr} (MTU ${c.network.podMtu})  services ${c.network.serviceCidr}`,
    `cni ${c.cni.plugin} ${c.cni.backend}${vxlan === undefined ? '' : ` (VNI ${vxlan.vni}, UDP ${vxlan.port})`}  API ${c.apiEndpoint.host}:${c.apiEndpoint.port} → ${c.apiEndpoint.address}`,
    '',
    table([
      ['NAME', 'ROLE', 'OS', 'HYPERVISOR', 'IP', 'MAC', 'POD CIDR (predicted)'],
      ...plan.nodes.map((n) => [
        n.name,
        n.role + (n.role === 'services' || n.schedulable ? '' : ' (tainted)'),
        n.os,
        n.hypervisor ?? '-',
        n.ip,
        n.mac ?? '-',
        n.podCidr?.cidr ?? '-',
      ]),
    ]),
    '',
    table([['STAGE', 'HOST', 'TASKS'], ...stageRows(plan)]),
    '',
    `${plan.tasks.length} tasks, ${plan.artifacts.length} artifacts, plan ${plan.hash.slice(0, 12)}`,
  ];
  return `${lines.join('\n')}\n`;
}

function stageRows(plan: Plan): string[][] {
  const rows: string[][] = [];
  for (const stage of STAGES) {
    const counts = new Map<string, number>();
    for (const t of plan.tasks.filter((x) => x.stage === stage)) counts.set(t.host, (counts.get(t.host) ?? 0) + 1);
    if (counts.size === 0) rows.push([stage, '-', '0']);
    for (const [host, n] of counts) rows.push([stage, host, String(n)]);
  }
  return rows;
}
