// The spec's HTTP proxy, for the things that fetch from outside: task scripts
// (curl, apt, dnf read the environment) and containerd pulling images. The
// cluster's own networks and names always bypass it.
import { forSystemd } from '../../model/url-credentials.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { shell, shellCode, shellLines, systemdEnvironment, type ShellText } from '../../util/escape/index.js';

export const CONTAINERD_PROXY_DROPIN = '/etc/systemd/system/containerd.service.d/http-proxy.conf';

function proxyVars(model: ClusterModel): [string, string][] | undefined {
  const p = model.proxy;
  if (p === undefined) return undefined;
  const c = model.cluster;
  const clusterNames = [`.${c.name}.${c.domain}`, '.svc', '.cluster.local'];
  const ownNetworks = [c.network.nodeCidr, ...model.podNetworks.all, ...model.serviceNetworks.all];
  const bypass = [...p.noProxy, 'localhost', '127.0.0.1', ...ownNetworks, ...clusterNames];
  const vars: [string, string][] = [];
  if (p.http !== undefined) vars.push(['HTTP_PROXY', p.http], ['http_proxy', p.http]);
  if (p.https !== undefined) vars.push(['HTTPS_PROXY', p.https], ['https_proxy', p.https]);
  const no = [...new Set(bypass.map((b) => b.trim()))].join(',');
  vars.push(['NO_PROXY', no], ['no_proxy', no]);
  return vars;
}

/** `export …` lines to prefix scripts that download; empty without a proxy. */
export function proxyExports(model: ClusterModel): ShellText {
  const vars = proxyVars(model);
  return vars === undefined ? shellCode('') : shell`${shellLines(vars.map(([k, v]) => shell`export ${k}=${v}`))}\n`;
}

export function renderContainerdProxy(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  const vars = proxyVars(model);
  if (vars === undefined) return [];
  // A credentialed proxy names its secret's systemd form (`%` doubled); the file holding it is 0600.
  const lines = vars.filter(([k]) => k === k.toUpperCase()).map(([k, v]) => forSystemd(systemdEnvironment(k, v)));
  const secret = lines.some((l) => l.includes('{{secret:'));
  return [
    {
      node: node.name,
      remotePath: CONTAINERD_PROXY_DROPIN,
      mode: secret ? '0600' : '0644',
      owner: 'root:root',
      content: `# Rendered by kubemix; re-plan instead of editing.\n[Service]\n${lines.join('\n')}\n`,
    },
  ];
}
