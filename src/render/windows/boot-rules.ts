// What a Windows worker does after a reboot, as data: an ordered decision
// table from observed facts to the next action. boot.ps1 is rendered from it
// (Get-KubemixBootAction), and tests evaluate the same table, so the script's
// decisions and the tested ones cannot drift apart.
//
// The start order is containerd → flanneld (network ready: a subnet.env
// written since this boot and flannel's HNS network) → kubelet → kube-proxy.
// flanneld's kube subnet manager needs the API server, so until it answers the
// node waits, with no deadline: after a power cut Windows often boots before
// the control plane does.

export const BOOT_FACTS = [
  'RuntimeRunning',
  'ExternalNetwork',
  'SubnetEnvStale',
  'ApiAnswers',
  'FlanneldRunning',
  'NetworkReady',
  'KubeletRunning',
  'KubeProxyRunning',
] as const;
export type BootFact = (typeof BOOT_FACTS)[number];
export type BootFacts = Readonly<Record<BootFact, boolean>>;

export const BOOT_ACTIONS = [
  'start-runtime',
  'create-external-network',
  'drop-stale-subnet-env',
  'wait-api',
  'start-flanneld',
  'wait-network',
  'start-kubelet',
  'start-kube-proxy',
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

/**
 * Calico: the kubelet runs calico-node-windows, whose node service deletes and
 * recreates the HNS networks on its first start after a boot (External, then
 * Calico); kube-proxy, a service, waits for the network and its host endpoint.
 */
function calicoRules(): BootRule[] {
  return [
    START_RUNTIME,
    {
      when: { KubeletRunning: false },
      action: 'start-kubelet',
      why: 'the kubelet starts calico-node-windows, which rebuilds the HNS networks',
    },
    {
      when: { NetworkReady: false },
      action: 'wait-network',
      why: 'calico-node-windows is creating the Calico network and its host endpoint',
    },
    {
      when: { KubeProxyRunning: false },
      action: 'start-kube-proxy',
      why: 'kube-proxy needs the Calico network and its source VIP',
    },
    { when: {}, action: 'done', why: 'all started' },
  ];
}

/** The table, first match wins; the last rule has no condition. */
export function bootRules(hostProcess: boolean, cni: 'flannel' | 'calico' = 'flannel'): BootRule[] {
  if (cni === 'calico') return calicoRules();
  const head: BootRule[] = [
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
  ];
  if (hostProcess) {
    // The kubelet runs the flannel and kube-proxy pods; it retries the API by itself.
    return [
      ...head,
      {
        when: { KubeletRunning: false },
        action: 'start-kubelet',
        why: 'the kubelet starts the flannel and kube-proxy pods',
      },
      { when: {}, action: 'done', why: 'all started' },
    ];
  }
  return [
    ...head,
    {
      when: { NetworkReady: false, ApiAnswers: false },
      action: 'wait-api',
      why: "flanneld's kube subnet manager needs the API server",
    },
    {
      when: { NetworkReady: false, FlanneldRunning: false },
      action: 'start-flanneld',
      why: 'flanneld writes subnet.env and creates the HNS network',
    },
    { when: { NetworkReady: false }, action: 'wait-network', why: 'flanneld is creating the network' },
    { when: { KubeletRunning: false }, action: 'start-kubelet', why: 'pods need the network first' },
    {
      when: { KubeProxyRunning: false },
      action: 'start-kube-proxy',
      why: 'kube-proxy needs the network and the kubelet',
    },
    { when: {}, action: 'done', why: 'all started' },
  ];
}

/** The action the table picks for these facts (what Get-KubemixBootAction returns). */
export function bootAction(rules: readonly BootRule[], facts: BootFacts): BootAction {
  const rule = rules.find((r) => Object.entries(r.when).every(([k, v]) => facts[k as BootFact] === v));
  if (rule === undefined) throw new Error('the boot table has no rule for these facts');
  return rule.action;
}

export function isWait(action: BootAction): boolean {
  return action.startsWith('wait-');
}
