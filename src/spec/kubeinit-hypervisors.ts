// `--hypervisors` (Kubeinit's hypervisor_hosts_spec): `a,b`, Kubeinit's
// `[[ansible_host=a,ansible_user=u],[ansible_host=b]]` or its JSON/YAML list
// `[{"ansible_host": "a"}]`. The Ansible connection variables a Kubeinit user
// sets there are the hypervisor's SSH settings in kubemix — ansible_host the
// address, ansible_user the user, ansible_ssh_private_key_file the identity
// file, ansible_port the port, host the name — so they are honoured; any other
// key is refused at its entry rather than dropped (it was silently ignored,
// and kubemix then connected as root with ssh-agent's keys).
import { didYouMean } from './suggest.js';
import { fail, parseBracketList, parseYamlList, type Parsed } from './kubeinit-lists.js';

export interface HypervisorEntry {
  readonly address: string;
  readonly name?: string;
  readonly user?: string;
  readonly identityFile?: string;
  readonly port?: number;
}

const PATH = '--hypervisors';
/** Each kubemix field with the Ansible variables (and Kubeinit's `host`) that mean it, the first preferred. */
const FIELDS: readonly [keyof HypervisorEntry, readonly string[]][] = [
  ['address', ['ansible_host', 'ansible_ssh_host']],
  ['name', ['host']],
  ['user', ['ansible_user', 'ansible_ssh_user']],
  ['identityFile', ['ansible_ssh_private_key_file', 'ansible_private_key_file']],
  ['port', ['ansible_port', 'ansible_ssh_port']],
];
const KEYS = FIELDS.flatMap(([, keys]) => keys);

export function parseHypervisorList(text: string): Parsed<HypervisorEntry[]> {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const example = '[[ansible_host=a],[ansible_host=b]] or [{ansible_host: a}, {ansible_host: b}]';
    const entries = /^\[\s*\[/.test(trimmed)
      ? parseBracketList(trimmed, PATH, 'hypervisors.syntax', example)
      : parseYamlList(trimmed, PATH, 'hypervisors.syntax', example);
    if (!entries.ok) return entries;
    const hosts: HypervisorEntry[] = [];
    for (const [i, entry] of entries.value.entries()) {
      const host = hypervisorEntry(entry, `${PATH}[${i}]`);
      if (!host.ok) return host;
      hosts.push(host.value);
    }
    return { ok: true, value: hosts };
  }
  const hosts = trimmed.split(',').map((h) => h.trim());
  if (hosts.some((h) => !/^[A-Za-z0-9.:_-]+$/.test(h)))
    return fail('hypervisors.syntax', PATH, `"${text}" is not a comma-separated list of host names or addresses`);
  return { ok: true, value: hosts.map((address) => ({ address })) };
}

function hypervisorEntry(entry: Record<string, unknown>, path: string): Parsed<HypervisorEntry> {
  const unknown = Object.keys(entry).find((key) => !KEYS.includes(key));
  if (unknown !== undefined) {
    const guess = didYouMean(unknown, KEYS);
    return fail(
      'hypervisors.syntax',
      `${path}.${unknown}`,
      `kubemix does not read "${unknown}" for a hypervisor${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
      `keys it reads: ${FIELDS.map(([field, keys]) => `${keys.join(' or ')} (${field})`).join(', ')}; for anything else write the spec with kubemix init and edit spec.infrastructure.hypervisors`,
    );
  }
  const out: Record<string, string | number> = {};
  for (const [field, keys] of FIELDS) {
    const given = keys.filter((key) => entry[key] !== undefined);
    if (given.length > 1)
      return fail(
        'hypervisors.syntax',
        `${path}.${given[1]}`,
        `${given.join(' and ')} both give the ${field}`,
        'keep one',
      );
    const key = given[0];
    if (key === undefined) continue;
    const value = entry[key];
    if (field === 'port') {
      const port =
        typeof value === 'number' || (typeof value === 'string' && /^[0-9]{1,5}$/.test(value)) ? Number(value) : NaN;
      if (!Number.isInteger(port) || port < 1 || port > 65535)
        return fail(
          'hypervisors.syntax',
          `${path}.${key}`,
          `${key} must be a port from 1 to 65535, got ${JSON.stringify(value)}`,
        );
      out[field] = port;
    } else if (typeof value !== 'string' || value === '') {
      return fail(
        'hypervisors.syntax',
        `${path}.${key}`,
        `${key} must be a single non-empty value, got ${JSON.stringify(value)}`,
      );
    } else out[field] = value;
  }
  if (out.address === undefined) return fail('hypervisors.syntax', path, 'each entry needs ansible_host=<address>');
  return { ok: true, value: out as unknown as HypervisorEntry };
}
