// The transports verify reaches nodes through: the executor's SSH transport,
// with the cluster's known_hosts (host keys verified) and bastions.
import { KnownHostsFile } from '../../transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../../transport/ssh.js';
import type { HostConnection } from '../../model/types.js';

export interface NodeTransportOptions {
  readonly knownHostsFile: string;
  readonly trustNewHosts: boolean;
  readonly agent: string | undefined;
}

export async function nodeTransports(
  hosts: readonly HostConnection[],
  nodes: readonly string[],
  options: NodeTransportOptions,
): Promise<Map<string, SshTransport>> {
  const knownHosts = await new KnownHostsFile(options.knownHostsFile).load();
  const out = new Map<string, SshTransport>();
  for (const h of hosts.filter((x) => nodes.includes(x.name)))
    out.set(
      h.name,
      new SshTransport(h, {
        ...DEFAULT_SSH_OPTIONS,
        knownHosts,
        trustNewHosts: options.trustNewHosts,
        maxSessions: 6,
        agent: options.agent,
      }),
    );
  return out;
}
