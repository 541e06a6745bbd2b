// The files the libvirt driver uploads to each hypervisor: the pool and
// network definitions, and per guest its volume, its domain (one per domain
// type the hypervisor may use: the probe in task-prepare-hypervisors picks)
// and, for Linux, its NoCloud seed; with several hypervisors, the script
// that joins its bridge to the others' and the boot unit that re-runs it (render/overlay.ts). Seeds hold host keys: root-only (0600).
import type { DriverArtifact, DriverHypervisor, DriverModel, DriverNode } from '../types.js';
import { definitionsDir, type DomainType } from './layout.js';
import { domainName } from './names.js';
import { domainXml, KVM_PROBE, kvmProbeXml, networkXml, poolXml, volumeXml } from './render/xml.js';
import { SEED_FILES, seedFiles } from './render/seed.js';
import { hasOverlay, overlayUnit, overlayUpScript } from './render/overlay.js';

/** Paths of the definitions on the hypervisor, under definitionsDir(). */
export const DEFINITION = {
  pool: 'pool.xml',
  network: 'network.xml',
  overlay: 'overlay-up.sh',
  /** The systemd unit that re-runs overlay-up.sh at boot; the overlay task installs it. */
  overlayUnit: 'overlay.service',
  volume: (node: DriverNode) => `${domainName(node)}/volume.xml`,
  domain: (node: DriverNode, type: DomainType) => `${domainName(node)}/domain-${type}.xml`,
  seed: (node: DriverNode, file: string) => `${domainName(node)}/seed/${file}`,
  /** A Windows guest's install media files (rendered by render/windows, placed here by Driver.installMedia). */
  media: (node: DriverNode) => `${domainName(node)}/unattend`,
} as const;

/** The domain types a hypervisor's guests may get: the user's choice, or both until the probe decides. */
export function domainTypes(hv: DriverHypervisor): DomainType[] {
  return hv.domainType === 'auto' ? ['kvm', 'qemu'] : [hv.domainType];
}

export function guestsOf(model: DriverModel, hypervisor: string): DriverNode[] {
  return model.nodes.filter((n) => n.hypervisor === hypervisor);
}

export function libvirtArtifacts(model: DriverModel): DriverArtifact[] {
  const dir = definitionsDir(model);
  return model.hypervisors.flatMap((hv) => {
    const file = (path: string, content: string, mode = '0644'): DriverArtifact => ({
      node: hv.name,
      remotePath: `${dir}/${path}`,
      mode: content.includes('{{secret:') ? '0600' : mode,
      owner: 'root',
      content,
    });
    return [
      file(DEFINITION.pool, poolXml(model)),
      ...(hv.domainType === 'qemu' ? [] : [file(KVM_PROBE.file, kvmProbeXml(model))]),
      file(DEFINITION.network, networkXml(model, hv)),
      ...(hasOverlay(model)
        ? [
            file(DEFINITION.overlay, overlayUpScript(model, hv), '0755'),
            file(DEFINITION.overlayUnit, overlayUnit(model, `${dir}/${DEFINITION.overlay}`)),
          ]
        : []),
      ...guestsOf(model, hv.name).flatMap((node) => {
        const seed = node.osFamily === 'linux' ? seedFiles(model, node) : undefined;
        return [
          file(DEFINITION.volume(node), volumeXml(node)),
          ...domainTypes(hv).map((t) => file(DEFINITION.domain(node, t), domainXml(model, node, t))),
          ...(seed === undefined ? [] : SEED_FILES.map((f) => file(DEFINITION.seed(node, f), seed[f], '0600'))),
        ];
      }),
    ];
  });
}
