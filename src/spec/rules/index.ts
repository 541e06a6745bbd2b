import type { Diagnostic } from '../../errors.js';
import {
  calicoBackend,
  hostGwNeedsOneSegment,
  hostProcessApplies,
  mtuFits,
  nodeMtuFitsOverlay,
  vxlanSettings,
} from './cni.js';
import type { Rule, RuleContext } from './context.js';
import {
  cidrsValidAndDisjoint,
  dualStackWithWindows,
  existingHostAddresses,
  gatewayInNetwork,
  podCidrFitsNodes,
  serviceCidrRoom,
  serviceCidrSize,
  specialRanges,
  roomForNodes,
} from './network.js';
import {
  controlPlaneCount,
  existingHostRoles,
  servicesNodeDistro,
  knownOperatingSystems,
  uniqueNames,
  untaintedControlPlane,
  windowsNameLength,
  windowsOnlyAsWorkers,
} from './nodes.js';
import { containerdVersion, kubernetesVersion, windowsPauseImage } from './versions.js';
import { mirrorKeys } from './mirrors.js';
import { downloadOverrides } from './downloads.js';
import { downloadFileUrls } from './download-file-urls.js';
import { notUsedYet } from './not-used-yet.js';
import { airGapped } from './airgap.js';
import { distinctHypervisors, placementPins } from './placement.js';
import { leaderElectionOrder } from './leader-election.js';
import { etcdTimingOrder } from './etcd-timing.js';

/** Every cross-field rule, run in this order; each returns all it finds. */
export const RULES: readonly Rule[] = [
  leaderElectionOrder,
  etcdTimingOrder,
  cidrsValidAndDisjoint,
  specialRanges,
  gatewayInNetwork,
  roomForNodes,
  podCidrFitsNodes,
  serviceCidrRoom,
  serviceCidrSize,
  dualStackWithWindows,
  existingHostAddresses,
  controlPlaneCount,
  knownOperatingSystems,
  windowsOnlyAsWorkers,
  windowsNameLength,
  uniqueNames,
  placementPins,
  distinctHypervisors,
  untaintedControlPlane,
  existingHostRoles,
  servicesNodeDistro,
  vxlanSettings,
  calicoBackend,
  hostGwNeedsOneSegment,
  hostProcessApplies,
  mtuFits,
  nodeMtuFitsOverlay,
  kubernetesVersion,
  containerdVersion,
  windowsPauseImage,
  mirrorKeys,
  downloadOverrides,
  downloadFileUrls,
  airGapped,
  notUsedYet,
];

export function runRules(ctx: RuleContext): Diagnostic[] {
  return RULES.flatMap((rule) => rule(ctx));
}
