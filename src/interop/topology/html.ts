// The topology as one HTML page: the SVG inline, and a details panel that
// follows the node under the pointer. No network: no external script, font
// or stylesheet.
import type { ClusterModel } from '../../model/resolve.js';
import { esc, nodeDetails, renderTopologySvg } from './svg.js';

export function renderTopologyHtml(model: ClusterModel): string {
  const details = Object.fromEntries(model.nodes.map((n) => [n.name, nodeDetails(model, n)]));
  // `<` escaped so no node detail can close the script element.
  const json = JSON.stringify(details).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(`${model.cluster.name} topology`)}</title>
<style>
body{font-family:DejaVu Sans,Arial,sans-serif;margin:16px}
#details{position:fixed;right:16px;top:16px;min-width:260px;background:#fff;border:1px solid #777;padding:8px 12px;white-space:pre;font-size:12px}
g.node{cursor:pointer}g.node:hover rect{filter:brightness(0.93)}
</style>
</head>
<body>
<div id="details">hover a node for details</div>
${renderTopologySvg(model)}<script type="application/json" id="node-details">${json}</script>
<script>
const details = JSON.parse(document.getElementById('node-details').textContent);
const panel = document.getElementById('details');
for (const g of document.querySelectorAll('g[data-node]')) {
  g.addEventListener('mouseenter', () => { panel.textContent = details[g.dataset.node].join('\\n'); });
}
</script>
</body>
</html>
`;
}
