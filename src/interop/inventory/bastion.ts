// The jump host hidden in `ansible_ssh_common_args`: `-J [user@]host[:port]`,
// `-o ProxyJump=…`, or `-o ProxyCommand="ssh -W %h:%p [-p port] [-l user]
// [-i key] [user@]host"` (kubespray's bastion form).
import { shlexSplit } from './value.js';

export interface Bastion {
  readonly address: string;
  readonly user?: string;
  readonly port?: number;
  readonly identityFile?: string;
}

/** The bastion, undefined when the args name none; throws when they cannot be split. */
export function bastionFromSshArgs(args: string): Bastion | undefined {
  const tokens = shlexSplit(args);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === '-J') return parseJump(tokens[i + 1] ?? '');
    if (t.startsWith('-J')) return parseJump(t.slice(2));
    const option = t === '-o' ? (tokens[++i] ?? '') : t.startsWith('-o') ? t.slice(2) : undefined;
    if (option === undefined) continue;
    const m = /^(\w+)\s*[= ]\s*(.*)$/s.exec(option);
    const key = m?.[1]?.toLowerCase();
    if (key === 'proxyjump') return parseJump(m?.[2] ?? '');
    if (key === 'proxycommand') return parseProxyCommand(m?.[2] ?? '');
  }
  return undefined;
}

/** `[user@]host[:port]`, first hop of a comma-separated chain. */
function parseJump(spec: string): Bastion | undefined {
  const first = spec.split(',')[0]?.replace(/^ssh:\/\//, '') ?? '';
  const m = /^(?:([^@]+)@)?([^:@]+)(?::(\d+))?$/.exec(first);
  if (m === null) return undefined;
  return {
    address: m[2] as string,
    ...(m[1] === undefined ? {} : { user: m[1] }),
    ...(m[3] === undefined ? {} : { port: Number(m[3]) }),
  };
}

const WITH_ARGUMENT = new Set([
  '-W',
  '-p',
  '-l',
  '-i',
  '-o',
  '-F',
  '-b',
  '-c',
  '-D',
  '-E',
  '-L',
  '-R',
  '-m',
  '-O',
  '-Q',
  '-S',
]);

function parseProxyCommand(command: string): Bastion | undefined {
  const tokens = shlexSplit(command);
  if (tokens[0] === undefined || !/(^|\/)ssh$/.test(tokens[0]) || !tokens.includes('-W')) return undefined;
  let user: string | undefined;
  let port: number | undefined;
  let identityFile: string | undefined;
  let target: string | undefined;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (WITH_ARGUMENT.has(t)) {
      const v = tokens[++i] ?? '';
      if (t === '-p') port = Number(v);
      else if (t === '-l') user = v;
      else if (t === '-i') identityFile = v;
    } else if (!t.startsWith('-')) target = t;
  }
  const jump = target === undefined ? undefined : parseJump(target);
  if (jump === undefined) return undefined;
  return {
    ...jump,
    ...(user === undefined ? {} : { user }),
    ...(port === undefined ? {} : { port }),
    ...(identityFile === undefined ? {} : { identityFile }),
  };
}
