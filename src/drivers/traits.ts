// What the spec's validation asks of a driver, without loading the driver:
// `kubemix validate` reads only these, so the drivers' task, render and state
// modules stay unloaded until a command plans or runs.
import type { DriverName, DriverTraits } from './types.js';

export const EXISTING_TRAITS: DriverTraits = {
  name: 'existing',
  createsMachines: false,
  controlPlanePath: 'spec.infrastructure.hosts',
  nodeNetworkIsOverlay: () => false,
};

export const LIBVIRT_TRAITS: DriverTraits = {
  name: 'libvirt',
  createsMachines: true,
  controlPlanePath: 'spec.nodes.controlPlane.count',
  // Several hypervisors join their guests' network with an encapsulating overlay.
  nodeNetworkIsOverlay: (spec) => spec.hypervisors.length > 1,
};

const TRAITS: Readonly<Record<DriverName, DriverTraits>> = { existing: EXISTING_TRAITS, libvirt: LIBVIRT_TRAITS };

export function driverTraits(name: DriverName): DriverTraits {
  return TRAITS[name];
}
