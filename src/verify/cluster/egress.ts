// `--egress HOST:PORT`: a target outside the cluster every probe pod opens a
// TCP connection to. None unless the user names one, so verify sends no
// traffic out of the cluster by itself. HOST is a DNS name, an IPv4 address
// or an IPv6 address in brackets; PORT 1-65535. Pure.
import { isIP } from 'node:net';
import { InputError } from '../../errors.js';

const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);

export function parseEgress(values: readonly string[]): string[] {
  return [
    ...new Set(
      values.map((v) => {
        const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(v);
        const host = m?.[1] ?? '';
        const port = Number(m?.[2] ?? '0');
        const ip = host.startsWith('[') ? isIP(host.slice(1, -1)) === 6 : isIP(host) === 4 || NAME.test(host);
        if (m === null || !ip || port < 1 || port > 65535)
          throw new InputError('flags.invalid', `--egress ${JSON.stringify(v)}: give HOST:PORT`, {
            path: 'flags.egress',
            hint: 'a DNS name, an IPv4 address or [IPv6] and a port 1-65535, e.g. --egress example.com:443',
          });
        return v;
      }),
    ),
  ];
}
