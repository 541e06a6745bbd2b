// Address arithmetic for IPv4 and IPv6 networks. Parsing is ipaddr.js's;
// the arithmetic uses BigInt so both families share one code path.
import { createRequire } from 'node:module';
import type IpAddr from 'ipaddr.js';

// `require`, not `import`: Node 20 imports a CommonJS package by first scanning its source for export
// names (cjs-module-lexer), ~10 ms of every `kubemix validate` for this one file (bench/startup.ts).
const ipaddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr;

export interface Cidr {
  readonly family: 4 | 6;
  /** Network address as an integer (host bits cleared). */
  readonly base: bigint;
  readonly prefix: number;
}

const BITS = { 4: 32, 6: 128 } as const;

export function parseIp(text: string): { family: 4 | 6; value: bigint } | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  // ipaddr accepts shorthand like "10.1" (classful); we want dotted quads only.
  if (text.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(text) && !text.includes(':')) return undefined;
  const addr = ipaddr.parse(text);
  const bytes = addr.toByteArray();
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return { family: addr.kind() === 'ipv4' ? 4 : 6, value };
}

/** Parses `a.b.c.d/n` or `x::/n`; undefined when it is not a CIDR. Host bits must be zero. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (ip === undefined || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > BITS[ip.family]) return undefined;
  const cidr = { family: ip.family, base: ip.value, prefix };
  return (ip.value & hostMask(cidr)) === 0n ? cidr : undefined;
}

/** True when `text` has host bits set (`10.0.0.1/24`): worth its own message. */
export function hasHostBits(text: string): boolean {
  const slash = text.indexOf('/');
  const ip = parseIp(text.slice(0, slash));
  const prefix = Number(text.slice(slash + 1));
  if (ip === undefined || !Number.isInteger(prefix) || prefix > BITS[ip.family]) return false;
  return (ip.value & hostMask({ family: ip.family, prefix })) !== 0n;
}

function hostMask(cidr: Pick<Cidr, 'family' | 'prefix'>): bigint {
  return (1n << BigInt(BITS[cidr.family] - cidr.prefix)) - 1n;
}

export function size(cidr: Cidr): bigint {
  return 1n << BigInt(BITS[cidr.family] - cidr.prefix);
}

export function lastAddress(cidr: Cidr): bigint {
  return cidr.base + size(cidr) - 1n;
}

export function contains(cidr: Cidr, ip: { family: 4 | 6; value: bigint }): boolean {
  return cidr.family === ip.family && ip.value >= cidr.base && ip.value <= lastAddress(cidr);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.base <= lastAddress(b) && b.base <= lastAddress(a);
}

export function formatIp(family: 4 | 6, value: bigint): string {
  const bytes: number[] = [];
  const count = family === 4 ? 4 : 16;
  for (let i = count - 1; i >= 0; i -= 1) bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr.family, cidr.base)}/${cidr.prefix}`;
}

/** The n-th address of the network (0 = network address). */
export function addressAt(cidr: Cidr, n: bigint): string {
  return formatIp(cidr.family, cidr.base + n);
}

/** Usable host addresses: all but network and broadcast for IPv4 (/31, /32 excepted). */
export function usableHosts(cidr: Cidr): bigint {
  if (cidr.family === 6) return size(cidr) - 1n;
  return cidr.prefix >= 31 ? size(cidr) : size(cidr) - 2n;
}

/** The i-th subnet of `prefix` inside `cidr` (pod CIDR per node). */
export function subnetAt(cidr: Cidr, prefix: number, i: bigint): Cidr {
  return { family: cidr.family, base: cidr.base + i * (1n << BigInt(BITS[cidr.family] - prefix)), prefix };
}

export function subnetCount(cidr: Cidr, prefix: number): bigint {
  return prefix < cidr.prefix ? 0n : 1n << BigInt(prefix - cidr.prefix);
}

/** An IPv4 CIDR with a dotted mask (`10.0.0.0/255.255.255.0`); undefined for anything else. */
export function withDottedMask(text: string): string | undefined {
  const cidr = parseCidr(text);
  if (cidr === undefined || cidr.family !== 4) return undefined;
  return `${formatIp(4, cidr.base)}/${formatIp(4, ((1n << 32n) - 1n) ^ hostMask(cidr))}`;
}
