// What a Windows worker does after a reboot, as data: an ordered decision
// table from observed facts to the next action. boot.ps1 is rendered from it
// (Get-KubemixBootAction), and tests evaluate the same table, so the script's
// decisions and the tested ones cannot drift apart.
//
// flanneld and kube-proxy are HostProcess pods the kubelet runs (and
// restarts, retrying the API server for as long as it takes: after a power
// cut Windows often boots before the control plane). What the node must do
// itself comes before the kubelet: containerd running, with flannel the
// persistent External network (so flanneld rebuilding its own, which is not
// persistent, never cuts the host off) and no subnet.env from before this
// boot (it describes a network that is gone). Then the kubelet; done.

export const BOOT_FACTS = ['RuntimeRunning', 'ExternalNetwork', 'SubnetEnvStale', 'KubeletRunning'] as const;
export type BootFact = (typeof BOOT_FACTS)[number];
export type BootFacts = Readonly<Record<BootFact, boolean>>;

export const BOOT_ACTIONS = [
  'start-runtime',
  'create-external-network',
  'drop-stale-subnet-env',
  'start-kubelet',
  'done',
] as const;
export type BootAction = (typeof BOOT_ACTIONS)[number];

export interface BootRule {
  /** Every listed fact must have the listed value. */
  readonly when: Partial<Record<BootFact, boolean>>;
  readonly action: BootAction;
  readonly why: string;
}

/** Waits back off from `first` seconds, doubling up to `max`; any other action resets the delay. */
export const BOOT_BACKOFF = { firstSeconds: 5, maxSeconds: 60 } as const;

const START_RUNTIME: BootRule = {
  when: { RuntimeRunning: false },
  action: 'start-runtime',
  why: 'containerd is Automatic but may have failed to start',
};

const START_KUBELET: BootRule = {
  when: { KubeletRunning: false },
  action: 'start-kubelet',
  why: 'the kubelet runs the pod network and kube-proxy pods, retrying the API server itself',
};

const DONE: BootRule = { when: {}, action: 'done', why: 'all started' };

/**
 * The table, first match wins; the last rule has no condition. Calico: the
 * kubelet runs calico-node-windows, whose node service deletes and recreates
 * the HNS networks (External, then Calico) at its first start after a boot,
 * and the kube-proxy pod, whose launcher waits for them.
 */
export function bootRules(cni: 'flannel' | 'calico' = 'flannel'): BootRule[] {
  if (cni === 'calico') return [START_RUNTIME, START_KUBELET, DONE];
  return [
    START_RUNTIME,
    {
      when: { ExternalNetwork: false },
      action: 'create-external-network',
      why: 'flannel rebuilding its network must not cut the host off',
    },
    {
      when: { SubnetEnvStale: true },
      action: 'drop-stale-subnet-env',
      why: 'a subnet.env from before this boot describes a network that is gone',
    },
    START_KUBELET,
    DONE,
  ];
}

/** The action the table picks for these facts (what Get-KubemixBootAction returns). */
export function bootAction(rules: readonly BootRule[], facts: BootFacts): BootAction {
  const rule = rules.find((r) => Object.entries(r.when).every(([k, v]) => facts[k as BootFact] === v));
  if (rule === undefined) throw new Error('the boot table has no rule for these facts');
  return rule.action;
}
