// The drivers by name: the one place that maps `spec.infrastructure.driver`
// to its implementation.
import { existingDriver } from './existing/index.js';
import { libvirtDriver } from './libvirt/index.js';
import type { Driver, DriverName } from './types.js';

export type { Driver, DriverName } from './types.js';

const DRIVERS: Readonly<Record<DriverName, Driver>> = { existing: existingDriver, libvirt: libvirtDriver };

export function driverFor(name: DriverName): Driver {
  return DRIVERS[name];
}
