// Calico's operator on the first controller, before the cluster manifests
// (which hold our Installation and the Felix/IPAM settings its CRDs define):
// each upstream manifest downloaded through the spec's proxy and artifact
// mirror, refused unless its sha256 matches, applied server-side.
import { CALICO, CHECKSUM_URLS, URLS } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { TIGERA_NAMESPACE } from '../../render/manifests/calico.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { sh, task } from '../task.js';
import type { Task } from '../types.js';
import { downloadScript } from './download.js';

const ADMIN = '--kubeconfig=/etc/kubernetes/admin.conf';
const VERSION_ANNOTATION = 'kubemix.dev/calico-version';

export function calicoOperatorTask(model: ClusterModel, host: string, after: readonly string[]): Task {
  const mirror = model.mirrors.artifacts;
  const steps = CALICO.manifests.map(
    (name) => `(
${downloadScript(
  {
    url: URLS.calicoManifest(CALICO.version, name),
    checksumUrl: CHECKSUM_URLS.calico(CALICO.version),
    // The CRDs exceed the client-side apply annotation limit: server-side only.
    install: `kubectl ${ADMIN} apply --server-side --force-conflicts -f "$file"`,
  },
  mirror,
)})`,
  );
  return task({
    stage: 'task-deploy-cluster',
    host,
    name: 'calico-operator',
    description: `apply the Tigera operator for Calico ${CALICO.version} (${CALICO.manifests.join(', ')}, sha256-verified)`,
    after,
    check:
      sh(`[ "$(kubectl ${ADMIN} get namespace ${TIGERA_NAMESPACE} -o jsonpath='{.metadata.annotations.kubemix\\.dev/calico-version}' 2>/dev/null)" = ${CALICO.version} ]
kubectl ${ADMIN} -n ${TIGERA_NAMESPACE} rollout status deployment/tigera-operator --timeout=10s >/dev/null`),
    apply: sh(`set -eu
${proxyExports(model)}${steps.join('\n')}
# Our custom resources need the CRDs served, the ConfigMap needs the namespace.
kubectl ${ADMIN} wait --for=condition=Established --timeout=120s crd/installations.operator.tigera.io crd/felixconfigurations.crd.projectcalico.org crd/ipamconfigs.crd.projectcalico.org
kubectl ${ADMIN} -n ${TIGERA_NAMESPACE} rollout status deployment/tigera-operator --timeout=300s
kubectl ${ADMIN} annotate --overwrite namespace ${TIGERA_NAMESPACE} ${VERSION_ANNOTATION}=${CALICO.version}`),
    timeoutSeconds: 600,
  });
}
