// An air-gapped cluster (spec.airGapped) gets every binary from the services
// node's download cache and every image from its registry: it needs that
// registry, installs Kubernetes from the release binaries (pkgs.k8s.io is on
// the internet), and cannot use Calico yet (its operator manifests are read
// from GitHub at deploy time and its images are not in kubemix's list).
import { error, type Rule } from './context.js';

export const airGapped: Rule = (ctx) => {
  const s = ctx.spec;
  if (!s.airGapped) return [];
  const out = [];
  if (!s.services.enabled || !s.services.registry)
    out.push(
      error(
        'airgap.no-registry',
        s.services.enabled ? 'spec.services.registry' : 'spec.services.enabled',
        "an air-gapped cluster pulls every image from the services node's registry, and this spec has none",
        'set spec.services.enabled and spec.services.registry to true (the defaults)',
      ),
    );
  if (s.kubernetesInstall === 'packages')
    out.push(
      error(
        'airgap.packages',
        'spec.kubernetes.install',
        'pkgs.k8s.io cannot be reached from an air-gapped cluster',
        "use spec.kubernetes.install: binaries (the release files come through the services node's download cache)",
      ),
    );
  if (s.cni.plugin === 'calico')
    out.push(
      error(
        'airgap.calico',
        'spec.cni.plugin',
        'Calico is not supported air-gapped yet: its operator manifests are fetched from GitHub while deploying and its images are not in the image list',
        'use spec.cni.plugin: flannel, or leave spec.airGapped off',
      ),
    );
  return out;
};
