// The node network of an imported inventory: the smallest IPv4 CIDR in which
// every host IP is a usable address and the default gateway (the last usable
// address) is not taken by a host.
import { formatCidr, lastAddress, parseIp, type Cidr } from '../../net/cidr.js';

export function coveringCidr(ips: readonly string[]): string | undefined {
  const values = ips
    .map((ip) => parseIp(ip))
    .filter((p) => p?.family === 4)
    .map((p) => (p as { value: bigint }).value);
  if (values.length === 0 || values.length !== ips.length) return undefined;
  for (let prefix = 30; prefix >= 8; prefix--) {
    const mask = ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix)) - 1n);
    const base = (values[0] as bigint) & mask;
    const cidr: Cidr = { family: 4, base, prefix };
    const last = lastAddress(cidr);
    const gateway = last - 1n;
    if (values.every((v) => (v & mask) === base && v > base && v < gateway)) return formatCidr(cidr);
  }
  return undefined;
}
