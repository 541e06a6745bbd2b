// The names a Windows worker must resolve before any DNS serves them: the API
// endpoint (kubeadm join discovery, the kubelet's kubeconfig; the flanneld
// and kube-proxy pods reach the API by address) and the services node's registry
// (containerd's hosts.toml). Linux nodes get the same names from their
// /etc/hosts block; on Windows they go in a block kubemix owns, between
// markers, in the hosts file, which the resolver reads before any DNS server.
import type { ClusterModel } from '../../model/resolve.js';
import { servicesFacts } from '../services/facts.js';
import { q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export const WINDOWS_HOSTS_FILE = 'C:\\Windows\\System32\\drivers\\etc\\hosts';
export const HOSTS_BEGIN = '# BEGIN kubemix';
export const HOSTS_END = '# END kubemix';

/** `address name` lines: only the names the node uses, sorted by name. */
export function windowsHostsEntries(model: ClusterModel): string[] {
  const api = model.cluster.apiEndpoint;
  const entries = new Map<string, string>([[api.host, api.address]]);
  const facts = servicesFacts(model);
  if (facts?.toggles.registry === true) entries.set(facts.registryHost, facts.node.ip);
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, address]) => `${address} ${name}`);
}

/** Replace kubemix's block (or add it) and leave every other line as it was; ASCII, as Windows writes it. */
export function hostsFile(model: ClusterModel): WindowsScripts {
  const block = [HOSTS_BEGIN, ...windowsHostsEntries(model), HOSTS_END];
  const read = `$lines = @(Get-Content -LiteralPath ${q(WINDOWS_HOSTS_FILE)} -ErrorAction SilentlyContinue)
$begin = [Array]::IndexOf($lines, ${q(HOSTS_BEGIN)})
$end = [Array]::IndexOf($lines, ${q(HOSTS_END)})
$wanted = ${qList(block)}
`;
  const apply = `${read}$kept = New-Object System.Collections.Generic.List[string]
for ($i = 0; $i -lt $lines.Count; $i++) {
  if ($begin -lt 0 -or $end -lt $begin -or $i -lt $begin -or $i -gt $end) { $kept.Add($lines[$i]) }
}
Set-Content -LiteralPath ${q(WINDOWS_HOSTS_FILE)} -Value (@($kept) + $wanted) -Encoding ASCII
`;
  const check = `${read}${checkThat(`$begin -ge 0 -and $end -gt $begin -and (($lines[$begin..$end]) -join "\`n") -eq ($wanted -join "\`n")`)}`;
  return { check, apply };
}
