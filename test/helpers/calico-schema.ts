// Strict zod transcriptions of the Calico custom resources kubemix emits
// (no OpenAPI models exist for CRDs): exactly the fields we set, with the
// values the operator and Calico accept (operator.tigera.io/v1 Installation,
// crd.projectcalico.org/v1 FelixConfiguration and IPAMConfig).
import { z } from 'zod';

const meta = z.strictObject({ name: z.literal('default') });
const cidr = z.string().regex(/^\d+\.\d+\.\d+\.\d+\/\d+$/);

const installation = z.strictObject({
  apiVersion: z.literal('operator.tigera.io/v1'),
  kind: z.literal('Installation'),
  metadata: meta,
  spec: z.strictObject({
    variant: z.literal('Calico'),
    serviceCIDRs: z.array(cidr).min(1),
    cni: z.strictObject({ type: z.literal('Calico'), ipam: z.strictObject({ type: z.literal('Calico') }) }),
    calicoNetwork: z.strictObject({
      bgp: z.literal('Disabled'),
      mtu: z.number().int().min(576).max(9000),
      linuxDataplane: z.enum(['Iptables', 'BPF', 'Nftables', 'VPP']),
      windowsDataplane: z.enum(['Disabled', 'HNS']),
      nodeAddressAutodetectionV4: z.strictObject({ cidrs: z.array(cidr).min(1) }),
      ipPools: z
        .array(
          z.strictObject({
            name: z.string().min(1),
            cidr,
            encapsulation: z.literal('VXLAN'),
            natOutgoing: z.enum(['Enabled', 'Disabled']),
            nodeSelector: z.string().min(1),
            blockSize: z.number().int().min(20).max(32),
          }),
        )
        .length(1),
    }),
  }),
});

const felix = z.strictObject({
  apiVersion: z.literal('crd.projectcalico.org/v1'),
  kind: z.literal('FelixConfiguration'),
  metadata: meta,
  // Windows: VXLAN VNI 4096 or more, UDP 4789.
  spec: z.strictObject({ vxlanVNI: z.number().int().min(4096).max(16777215), vxlanPort: z.literal(4789) }),
});

const ipam = z.strictObject({
  apiVersion: z.literal('crd.projectcalico.org/v1'),
  kind: z.literal('IPAMConfig'),
  metadata: meta,
  spec: z.strictObject({ strictAffinity: z.literal(true), autoAllocateBlocks: z.boolean() }),
});

/** Schema by kind, for the Calico kinds kubemix renders. */
export const CALICO_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  Installation: installation,
  FelixConfiguration: felix,
  IPAMConfig: ipam,
};
export const CALICO_API_VERSIONS = new Set(['operator.tigera.io/v1', 'crd.projectcalico.org/v1']);
