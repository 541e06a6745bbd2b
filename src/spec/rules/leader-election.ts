// spec.kubernetes.leaderElection: the three durations must nest as client-go's
// leader election requires (leaderelection.NewLeaderElector), or
// kube-controller-manager and kube-scheduler exit at start — on every
// control-plane node, after the deploy has gone that far. The fields left out
// keep the components' defaults, which take part in the comparison.
import { LEADER_ELECTION_DEFAULTS } from '../types.js';
import { error, type Rule } from './context.js';

const PATH = 'spec.kubernetes.leaderElection';
/** client-go's JitterFactor: the renew deadline must exceed 1.2 × the retry period. */
const JITTER = 1.2;

export const leaderElectionOrder: Rule = (ctx) => {
  const set = ctx.spec.kubeadm.leaderElection;
  if (set === undefined) return [];
  const e = { ...LEADER_ELECTION_DEFAULTS, ...set };
  const hint = `e.g. leaseDuration: 120s, renewDeadline: 90s, retryPeriod: 10s (defaults ${LEADER_ELECTION_DEFAULTS.leaseDuration}s, ${LEADER_ELECTION_DEFAULTS.renewDeadline}s, ${LEADER_ELECTION_DEFAULTS.retryPeriod}s)`;
  if (e.leaseDuration <= e.renewDeadline)
    return [
      error(
        'kubernetes.leader-election',
        `${PATH}.${'leaseDuration' in set ? 'leaseDuration' : 'renewDeadline'}`,
        `leaseDuration (${e.leaseDuration}s) must be longer than renewDeadline (${e.renewDeadline}s), or kube-controller-manager and kube-scheduler refuse to start`,
        hint,
      ),
    ];
  if (e.renewDeadline <= JITTER * e.retryPeriod)
    return [
      error(
        'kubernetes.leader-election',
        `${PATH}.${'retryPeriod' in set ? 'retryPeriod' : 'renewDeadline'}`,
        `renewDeadline (${e.renewDeadline}s) must be longer than ${JITTER} × retryPeriod (${e.retryPeriod}s), or kube-controller-manager and kube-scheduler refuse to start`,
        hint,
      ),
    ];
  return [];
};
