// spec.kubernetes.etcd: etcd checks its two timings against each other when it
// starts (embed.Config.Validate) and exits on a mismatch — on every
// control-plane node, in the middle of kubeadm init, with nothing but the
// static pod's log to say why. The field left out keeps etcd's default, which
// takes part in the comparison.
import { ETCD_TIMING_DEFAULTS } from '../types.js';
import { error, type Rule } from './context.js';

const PATH = 'spec.kubernetes.etcd';
/** etcd: the election timeout must be at least five heartbeats. */
const HEARTBEATS_PER_ELECTION = 5;

export const etcdTimingOrder: Rule = (ctx) => {
  const set = ctx.spec.kubeadm.etcd;
  if (set === undefined) return [];
  const e = { ...ETCD_TIMING_DEFAULTS, ...set };
  if (e.electionTimeout >= HEARTBEATS_PER_ELECTION * e.heartbeatInterval) return [];
  return [
    error(
      'kubernetes.etcd-timing',
      `${PATH}.${'electionTimeout' in set ? 'electionTimeout' : 'heartbeatInterval'}`,
      `electionTimeout (${e.electionTimeout}ms) must be at least ${HEARTBEATS_PER_ELECTION} × heartbeatInterval (${e.heartbeatInterval}ms), or etcd refuses to start`,
      `e.g. heartbeatInterval: 1s, electionTimeout: 10s (etcd's defaults ${ETCD_TIMING_DEFAULTS.heartbeatInterval}ms and ${ETCD_TIMING_DEFAULTS.electionTimeout}ms; it suggests about ten heartbeats per election)`,
    ),
  ];
};
