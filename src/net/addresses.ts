// Node addresses: controllers from the first host address up, then workers in
// group order; the services node takes the highest usable address below the
// gateway (10.0.0.0/24 → gateway .254, services .253), as Kubeinit does.
import { formatIp, lastAddress, parseIp, type Cidr } from './cidr.js';

export function defaultGateway(net: Cidr): bigint {
  return lastAddress(net) - 1n;
}

export function gatewayOf(net: Cidr, gateway: string | undefined): bigint {
  const parsed = gateway === undefined ? undefined : parseIp(gateway);
  return parsed?.value ?? defaultGateway(net);
}

/** Addresses for nodes in order; `services` marks the one that takes the top address. */
export function allocateAddresses(net: Cidr, gateway: bigint, roles: readonly string[]): string[] {
  const top = highestUsableBelow(net, gateway);
  let next = net.base + 1n;
  return roles.map((role) => {
    if (role === 'services') return formatIp(4, top);
    while (next === gateway || next === top) next += 1n;
    const ip = next;
    next += 1n;
    return formatIp(4, ip);
  });
}

function highestUsableBelow(net: Cidr, gateway: bigint): bigint {
  let candidate = lastAddress(net) - 1n;
  if (candidate === gateway) candidate -= 1n;
  return candidate;
}
