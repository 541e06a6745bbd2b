// CNI rules: settings Windows requires, and pod MTU.
import { driverTraits } from '../../drivers/traits.js';
import { CALICO, CALICO_WINDOWS, FLANNEL_VXLAN, calicoWindowsRefusal } from '../../matrix/index.js';
import type { Diagnostic } from '../../errors.js';
import { ETHERNET_MTU, maxPodMtu, nodeMtu } from '../../net/mtu.js';
import { mtuSettings } from '../mtu.js';
import { error, hasWindows, warning, type Rule, type RuleContext } from './context.js';

export const vxlanSettings: Rule = (ctx) => {
  const cni = ctx.spec.cni;
  if (cni.backend !== 'vxlan') return [];
  const out: Diagnostic[] = [];
  const why =
    'Windows nodes require it, and using it from the start lets Windows nodes join later without a disruptive flannel migration';
  if (cni.plugin === 'flannel' && cni.vni !== FLANNEL_VXLAN.vni)
    out.push(
      error(
        'cni.vxlan-vni',
        'spec.cni.vni',
        `flannel vxlan must use VNI ${FLANNEL_VXLAN.vni}: ${why}`,
        `set vni: ${FLANNEL_VXLAN.vni} (or leave it out)`,
      ),
    );
  if (cni.plugin === 'calico' && cni.vni < FLANNEL_VXLAN.vni)
    out.push(
      error(
        'cni.vxlan-vni',
        'spec.cni.vni',
        `Calico VXLAN with Windows needs a VNI of ${FLANNEL_VXLAN.vni} or more`,
        `set vni: ${FLANNEL_VXLAN.vni}`,
      ),
    );
  if (cni.port !== FLANNEL_VXLAN.port)
    out.push(
      error(
        'cni.vxlan-port',
        'spec.cni.port',
        `vxlan must use UDP port ${FLANNEL_VXLAN.port}: ${why}`,
        `set port: ${FLANNEL_VXLAN.port} (or leave it out)`,
      ),
    );
  return out;
};

export const calicoBackend: Rule = (ctx) => {
  if (ctx.spec.cni.plugin !== 'calico') return [];
  const out: Diagnostic[] = [];
  if (ctx.spec.cni.backend !== 'vxlan')
    out.push(
      error(
        'cni.calico-backend',
        'spec.cni.backend',
        'Calico for Windows supports only the vxlan backend',
        'set backend: vxlan',
      ),
    );
  out.push(...calicoWindowsBuilds(ctx), ...calicoKubernetes(ctx));
  // Calico for Windows has no VXLAN MTU setting (tigera/docs windows-calico/limitations.mdx).
  if (hasWindows(ctx) && ctx.spec.cni.mtu !== undefined)
    out.push(
      warning(
        'cni.calico-windows-mtu',
        'spec.cni.mtu',
        'Calico for Windows does not support setting the VXLAN MTU: Windows nodes keep their own, only Linux nodes use this one',
        'leave spec.cni.mtu out, so Linux and Windows pods get the MTU the overlay leaves',
      ),
    );
  if (ctx.spec.network.podCidr.includes(',')) {
    out.push(
      error(
        'cni.calico-dual-stack',
        'spec.network.podCidr',
        'kubemix renders a single IPv4 Calico pool; dual-stack Calico is not planned',
        'use one IPv4 pod CIDR, or plugin: flannel',
      ),
    );
  }
  return out;
};

/** Each Windows worker's build must be one Calico for Windows supports (the matrix says which, and why not). */
function calicoWindowsBuilds(ctx: RuleContext): Diagnostic[] {
  const seen = new Set<string>();
  return ctx.nodes.flatMap((n) => {
    const why = n.os.startsWith('windows') ? calicoWindowsRefusal(n.os) : undefined;
    if (why === undefined || seen.has(n.path)) return [];
    seen.add(n.path);
    return [
      error(
        'cni.calico-windows-build',
        `${n.path}.os`,
        `${n.os} cannot run Calico ${CALICO.version}: ${why}`,
        `use ${CALICO_WINDOWS.builds.join(' or ')} for this worker, or plugin: flannel`,
      ),
    ];
  });
}

/** Calico is tested against a window of Kubernetes minors; outside it kubemix warns (exit 0). */
function calicoKubernetes(ctx: RuleContext): Diagnostic[] {
  const minor = ctx.spec.kubernetesVersion.split('.').slice(0, 2).join('.');
  const tested: readonly string[] = CALICO.testedKubernetes;
  if (tested.includes(minor)) return [];
  return [
    warning(
      'cni.calico-kubernetes-untested',
      'spec.kubernetes.version',
      `Calico ${CALICO.version} is tested against Kubernetes ${tested.join(', ')}, not ${minor}`,
      `use Kubernetes ${tested.at(-1) ?? ''} for a combination upstream tests`,
    ),
  ];
}

export const hostGwNeedsOneSegment: Rule = (ctx) => {
  // A driver that creates the machines makes the segment itself; the user cables existing hosts.
  if (ctx.spec.cni.backend !== 'host-gw' || driverTraits(ctx.spec.driver).createsMachines || !hasWindows(ctx))
    return [];
  return [
    warning(
      'cni.host-gw-segment',
      'spec.cni.backend',
      'host-gw needs every node on one L2 segment: kubemix checks the addresses now, and before installing that no router sits between any two nodes (task-run-validations)',
    ),
  ];
};

/** The spec's HostProcess images replace the Windows flanneld and kube-proxy pods' default image: they need a Windows node (and flannel, for flanneld's). */
export const hostProcessApplies: Rule = (ctx) => {
  if (ctx.spec.windows?.hostProcess === undefined) return [];
  if (ctx.spec.cni.plugin !== 'flannel' && hasWindows(ctx))
    return [
      warning(
        'windows.hostprocess-unused',
        'spec.windows.hostProcess.flannelImage',
        'with Calico only kubeProxyImage is used (the operator runs calico-node-windows from its own image)',
        'remove flannelImage, or use flannel',
      ),
    ];
  if (!hasWindows(ctx))
    return [
      warning(
        'windows.hostprocess-unused',
        'spec.windows.hostProcess',
        'no Windows nodes: the HostProcess DaemonSets are not rendered',
      ),
    ];
  return [];
};

export const mtuFits: Rule = (ctx) => {
  const wanted = ctx.spec.cni.mtu;
  if (wanted === undefined) return [];
  const max = maxPodMtu(mtuSettings(ctx.spec));
  return wanted > max
    ? [
        error(
          'cni.mtu-too-large',
          'spec.cni.mtu',
          `pod MTU ${wanted} does not fit: the node network MTU leaves at most ${max} after ${ctx.spec.cni.backend} encapsulation`,
          `use ${max} or less (or leave it out)`,
        ),
      ]
    : [];
};

/**
 * Across several hypervisors the node network is a VXLAN mesh over the
 * hypervisors' own network (assumed Ethernet 1500): a guest frame larger
 * than 1500 − 50 would be dropped by the underlay, so the node MTU stays at
 * or below 1450.
 */
export const nodeMtuFitsOverlay: Rule = (ctx) => {
  const wanted = ctx.spec.network.mtu;
  const settings = mtuSettings(ctx.spec);
  if (wanted === undefined || !settings.nodeNetworkIsVxlan) return [];
  const max = nodeMtu({ ...settings, nodeMtu: undefined });
  return wanted > max
    ? [
        error(
          'network.mtu-too-large',
          'spec.network.mtu',
          `node MTU ${wanted} does not fit the VXLAN mesh between ${ctx.spec.hypervisors.length} hypervisors: it carries at most ${max} (${ETHERNET_MTU} minus 50 bytes of VXLAN)`,
          `use ${max} or less (or leave it out)`,
        ),
      ]
    : [];
};
