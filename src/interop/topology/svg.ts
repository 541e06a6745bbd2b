// renderTopologySvg: the cluster as a picture people can read, like Kubeinit's
// diagrams but from the spec. Physical (hypervisors, their guests, the VXLAN
// mesh between hypervisors, the services node) above, logical (node network, service CIDR,
// API endpoint, DNS, VXLAN) below. Linux nodes are blue with rounded corners,
// Windows nodes orange with square corners and a four-pane mark, so they
// differ in colour and in shape. Deterministic and self-contained.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { layoutTopology, PAD, type Box, type Layout } from './layout.js';

export const COLORS = {
  linux: '#dbe8fb',
  linuxStroke: '#2463c2',
  windows: '#fde6cf',
  windowsStroke: '#c25e00',
  services: '#e3f4e1',
  servicesStroke: '#2e7d32',
} as const;

export function esc(text: string | number): string {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function text(x: number, y: number, body: string, attrs = ''): string {
  return `<text x="${x}" y="${y}"${attrs === '' ? '' : ` ${attrs}`}>${esc(body)}</text>`;
}

function rect(b: Box, attrs: string): string {
  return `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" ${attrs}/>`;
}

export function nodeDetails(model: ClusterModel, n: PlanNode): string[] {
  return [
    `${n.name} (${n.role}, ${n.os}${n.windowsBuild === undefined ? '' : ` build ${n.windowsBuild}`})`,
    `FQDN ${n.fqdn}`,
    `IP ${n.ip}${n.mac === undefined ? '' : `  MAC ${n.mac}`}`,
    ...(n.podCidr === undefined ? [] : [`pod CIDR ${n.podCidr.cidr} (predicted)`]),
    ...(n.hypervisor === undefined ? [] : [`on ${n.hypervisor}`]),
    ...(n.taints.length === 0 ? [] : [`taints ${n.taints.join(', ')}`]),
    `API ${model.cluster.apiEndpoint.host}:${model.cluster.apiEndpoint.port}`,
  ];
}

function nodeGroup(model: ClusterModel, n: PlanNode, b: Box): string {
  const services = n.role === 'services';
  const win = n.osFamily === 'windows';
  const fill = services ? COLORS.services : win ? COLORS.windows : COLORS.linux;
  const stroke = services ? COLORS.servicesStroke : win ? COLORS.windowsStroke : COLORS.linuxStroke;
  const corner = win ? 0 : 12;
  const dash = n.role === 'control-plane' ? ' stroke-width="3"' : ' stroke-width="1.5"';
  const mark = win
    ? `<g fill="${stroke}">${[0, 1].flatMap((i) => [0, 1].map((j) => `<rect x="${b.x + b.w - 30 + i * 10}" y="${b.y + 8 + j * 10}" width="8" height="8"/>`)).join('')}</g>`
    : `<circle cx="${b.x + b.w - 20}" cy="${b.y + 18}" r="9" fill="${stroke}"/>`;
  const lines = [
    text(b.x + 10, b.y + 20, n.name, 'class="name"'),
    text(b.x + 10, b.y + 38, `${n.role} · ${n.os}`),
    text(b.x + 10, b.y + 55, `IP ${n.ip}`),
    text(
      b.x + 10,
      b.y + 72,
      n.podCidr === undefined ? (services ? 'HAProxy · Bind · registry' : '') : `pods ${n.podCidr.cidr} (predicted)`,
    ),
  ];
  return [
    `<g class="node" data-node="${esc(n.name)}" data-os="${n.osFamily}" data-role="${n.role}">`,
    `<title>${esc(nodeDetails(model, n).join('\n'))}</title>`,
    rect(b, `rx="${corner}" fill="${fill}" stroke="${stroke}"${dash}`),
    mark,
    ...lines,
    '</g>',
  ].join('');
}

function physical(model: ClusterModel, layout: Layout): string[] {
  const out: string[] = [text(PAD, layout.top - 10, 'Physical: hypervisors and guests', 'class="h"')];
  for (const c of layout.columns) {
    out.push(rect(c.box, 'rx="6" fill="#f5f5f5" stroke="#777"'));
    out.push(
      text(c.box.x + 10, c.box.y + 22, `${c.name}${c.address === undefined ? '' : ` (${c.address})`}`, 'class="name"'),
    );
    for (const { node, box } of c.nodes) out.push(nodeGroup(model, node, box));
  }
  if (layout.columns.length > 1) {
    const y = layout.physicalBottom + 14;
    const first = layout.columns[0]?.box;
    const last = layout.columns.at(-1)?.box;
    out.push(
      `<rect x="${first?.x ?? PAD}" y="${y}" width="${(last?.x ?? 0) + (last?.w ?? 0) - (first?.x ?? 0)}" height="26" rx="13" fill="#ede7f6" stroke="#5e35b1"/>`,
    );
    out.push(
      text(
        (first?.x ?? PAD) + 12,
        y + 18,
        `VXLAN mesh across ${layout.columns.length} hypervisors · one bridge each · node MTU ${model.cluster.network.nodeMtu}`,
      ),
    );
  }
  return out;
}

function logical(model: ClusterModel, layout: Layout, top: number): string[] {
  const { network, apiEndpoint, name, domain } = model.cluster;
  const { plugin, backend, vxlan } = model.overlay;
  const overlay =
    vxlan === undefined ? ' · routes via node IPs (one L2 segment)' : ` · VNI ${vxlan.vni} · UDP ${vxlan.port}`;
  const w = layout.width - 2 * PAD;
  const lines = [
    `node network ${network.nodeCidr} · gateway ${network.gateway} · MTU ${network.nodeMtu}: ${nodeAddresses(model)}`,
    `pod network ${network.podCidr} (a /24 per node, predicted) · pod MTU ${network.podMtu} · service CIDR ${network.serviceCidr}`,
    `API ${apiEndpoint.host}:${apiEndpoint.port} → ${apiEndpoint.address} ${model.services?.loadBalancer === true ? '(HAProxy on the services node → control plane)' : '(first control-plane node, no load balancer)'}`,
    `DNS: <node>.${name}.${domain}, api / api-int / *.apps / registry .${name}.${domain}`,
    `CNI ${plugin} ${backend}${overlay}`,
  ];
  const out = [
    text(PAD, top - 10, 'Logical: networks, endpoints, names', 'class="h"'),
    `<rect x="${PAD}" y="${top}" width="${w}" height="${lines.length * 22 + 16}" rx="6" fill="#fafafa" stroke="#777"/>`,
  ];
  lines.forEach((l, i) => out.push(text(PAD + 12, top + 26 + i * 22, l)));
  return out;
}

function legend(y: number): string[] {
  const item = (x: number, fill: string, stroke: string, rx: number, label: string, width = '1.5') =>
    `<rect x="${x}" y="${y}" width="28" height="18" rx="${rx}" fill="${fill}" stroke="${stroke}" stroke-width="${width}"/>${text(x + 36, y + 14, label)}`;
  return [
    `<g class="legend">`,
    text(PAD, y - 8, 'Legend', 'class="h"'),
    item(PAD, COLORS.linux, COLORS.linuxStroke, 6, 'Linux node (round corners, dot)'),
    item(PAD + 270, COLORS.windows, COLORS.windowsStroke, 0, 'Windows node (square, four panes)'),
    item(PAD + 550, COLORS.services, COLORS.servicesStroke, 6, 'services node'),
    item(PAD + 720, '#ffffff', '#333', 6, 'thick border: control plane', '3'),
    '</g>',
  ];
}

export function renderTopologySvg(model: ClusterModel): string {
  const layout = layoutTopology(model, 70);
  const overlay = layout.columns.length > 1 ? 44 : 0;
  const logicalTop = layout.physicalBottom + overlay + 40;
  const legendTop = logicalTop + 5 * 22 + 16 + 40;
  const height = legendTop + 40;
  const k8s = model.versions['kubernetes'] ?? '';
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${height}" viewBox="0 0 ${layout.width} ${height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
    '<style>.name{font-weight:bold;font-size:13px}.h{font-weight:bold;font-size:15px}</style>',
    `<rect width="${layout.width}" height="${height}" fill="#ffffff"/>`,
    text(
      PAD,
      32,
      `Cluster ${model.cluster.name}.${model.cluster.domain} · Kubernetes ${k8s} · ${model.nodes.length} nodes · driver ${model.cluster.driver}`,
      'class="h"',
    ),
    ...physical(model, layout),
    ...logical(model, layout, logicalTop),
    ...legend(legendTop),
    '</svg>',
    '',
  ].join('\n');
}

/** Every node's address while that fits on one line; past that the range (each node box shows its own IP). */
function nodeAddresses(model: ClusterModel): string {
  const MAX_LISTED = 6;
  if (model.nodes.length <= MAX_LISTED) return model.nodes.map((n) => `${n.name} ${n.ip}`).join(', ');
  const first = model.nodes[0];
  const last = model.nodes[model.nodes.length - 1];
  return `${model.nodes.length} nodes, ${first?.name} ${first?.ip} … ${last?.name} ${last?.ip}`;
}
