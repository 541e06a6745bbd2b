// What `upgrade` moves besides the nodes, once the control planes are
// through: Calico's Tigera operator (which also runs calico-node-windows on
// Windows workers) at the matrix's version, the cluster manifests kubemix
// applies (CNI, its Windows pieces, RuntimeClasses, Calico's Installation) at
// the target's versions, on Calico a wait until the operator has rolled
// calico-node (and calico-node-windows) out at its version, and the guard
// webhook, when `kubemix guard install` put one in the cluster: kubemix's own
// image and the upgraded spec it reads. Pure.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { GUARD_NAME, guardRolloutSeconds } from '../../guard/install.js';
import { renderManifests } from '../../render/manifests/index.js';
import type { RenderedArtifact } from '../../render/types.js';
import { VERSION } from '../../version.js';
import { KUBEMIX_IMAGE_REPOSITORY } from '../../matrix/index.js';
import { artifactId, uploadPath } from '../artifact-path.js';
import { sh, task } from '../task.js';
import { calicoOperatorTask } from '../tasks/calico.js';
import { calicoRolloutTask } from './calico-rollout.js';
import type { Task } from '../types.js';

import { shell, shellCode, shellLines } from '../../util/escape/index.js';
const KUBECTL = shellCode('kubectl --kubeconfig=/etc/kubernetes/admin.conf');
export const GUARD_IMAGE = `${KUBEMIX_IMAGE_REPOSITORY}:${VERSION}`;
/** The upgraded spec, for the guard's ConfigMap (0600 on the first control plane: a spec may name secrets' files). */
export const GUARD_SPEC_PATH = '/etc/kubemix/guard/cluster.yaml';

type Contribution = { tasks: Task[]; artifacts: RenderedArtifact[] };

/** The add-on tasks in order, the first after `after`; the last one's id is the next barrier. */
export function addonTasks(
  model: ClusterModel,
  api: PlanNode,
  after: readonly string[],
  specText: string | undefined,
): Contribution {
  const out: Contribution = { tasks: [], artifacts: [] };
  let barrier = [...after];
  const push = (c: Contribution): void => {
    const t = c.tasks.map((x) => ({ ...x, after: [...barrier].sort() }));
    out.tasks.push(...t);
    out.artifacts.push(...c.artifacts);
    barrier = t.map((x) => x.id);
  };
  // The operator first, with or without Windows workers: it rolls calico-node and calico-node-windows itself.
  if (model.overlay.plugin === 'calico') push({ tasks: [calicoOperatorTask(model, api.name, [])], artifacts: [] });
  push(manifestsTask(model, api));
  // Workers are drained only once every calico-node pod (and calico-node-windows pod) runs the new version.
  if (model.overlay.plugin === 'calico') push({ tasks: [calicoRolloutTask(model, api.name)], artifacts: [] });
  push(guardTask(api, specText));
  return out;
}

/** The cluster manifests kubemix applies (CNI, its Windows pieces, RuntimeClasses) at the target's versions. */
function manifestsTask(model: ClusterModel, api: PlanNode): Contribution {
  const manifests = renderManifests(model);
  const apply = shellLines([
    shellCode('set -eu'),
    ...manifests.map((m) => shell`${KUBECTL} apply --server-side --force-conflicts -f ${uploadPath(m)}`),
  ]);
  return {
    tasks: [
      task({
        stage: 'task-deploy-cluster',
        host: api.name,
        name: 'upgrade-addons',
        description: `apply ${manifests.map((m) => m.remotePath).join(', ')} at the target's versions`,
        check: null,
        apply: sh(apply),
        uploads: manifests.map((m) => artifactId(m.node, m.remotePath)),
        timeoutSeconds: 300,
      }),
    ],
    artifacts: manifests,
  };
}

/**
 * The guard webhook, found by its ValidatingWebhookConfiguration (its
 * namespace is the one `guard install --namespace` chose): kubemix's image
 * at this kubemix's version (an image the user chose with --image is kept)
 * and its cluster ConfigMap holding the upgraded spec, then a restart so the
 * webhook reads it. No webhook: nothing to do.
 */
function guardTask(api: PlanNode, specText: string | undefined): Contribution {
  const spec: RenderedArtifact | undefined =
    specText === undefined
      ? undefined
      : { node: api.name, remotePath: GUARD_SPEC_PATH, mode: '0600', owner: 'root:root', content: specText };
  const find = shell`ns=$(${KUBECTL} get validatingwebhookconfiguration ${GUARD_NAME} -o jsonpath='{.webhooks[0].clientConfig.service.namespace}' 2>/dev/null || true)
[ -n "$ns" ] || { echo 'no guard webhook in the cluster: nothing to upgrade'; exit 0; }
image=$(${KUBECTL} -n "$ns" get deployment ${GUARD_NAME} -o jsonpath='{.spec.template.spec.containers[?(@.name=="guard")].image}')`;
  const cm = `${GUARD_NAME}-cluster`;
  const hasCm = shell`${KUBECTL} -n "$ns" get configmap ${cm} >/dev/null 2>&1`;
  const check = shell`${find}
case "$image" in ghcr.io/kubemix/kubemix:*) [ "$image" = '${GUARD_IMAGE}' ] || exit 1 ;; esac
${spec === undefined ? shellCode('') : shell`if ${hasCm}; then ${KUBECTL} -n "$ns" get configmap ${cm} -o jsonpath='{.data.cluster\\.yaml}' | cmp -s - ${GUARD_SPEC_PATH} || exit 1; fi\n`}exit 0`;
  const apply = shell`set -eu
${find}
case "$image" in
  ghcr.io/kubemix/kubemix:*) ${KUBECTL} -n "$ns" set image deployment/${GUARD_NAME} guard='${GUARD_IMAGE}' ;;
  *) echo "keeping the guard image $image: not kubemix's own" ;;
esac
${spec === undefined ? shellCode('') : shell`if ${hasCm}; then\n  ${KUBECTL} -n "$ns" create configmap ${cm} --from-file=cluster.yaml=${GUARD_SPEC_PATH} --dry-run=client -o yaml | ${KUBECTL} apply --server-side --force-conflicts -f -\nfi\n`}${KUBECTL} -n "$ns" rollout restart deployment/${GUARD_NAME}
${KUBECTL} -n "$ns" rollout status deployment/${GUARD_NAME} ${`--timeout=${guardRolloutSeconds()}s`}`;
  return {
    tasks: [
      task({
        stage: 'task-deploy-cluster',
        host: api.name,
        name: 'upgrade-guard',
        description: `the guard webhook, if installed: image ${GUARD_IMAGE} and the upgraded spec`,
        check: sh(check),
        apply: sh(apply),
        uploads: spec === undefined ? [] : [artifactId(spec.node, spec.remotePath)],
        timeoutSeconds: guardRolloutSeconds() + 60,
      }),
    ],
    artifacts: spec === undefined ? [] : [spec],
  };
}
