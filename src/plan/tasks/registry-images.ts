// task-download-images on the services node of an air-gapped cluster: its
// registry serves every image the nodes pull (kubeadm's, the sandbox pause
// per OS build, the CNI's, verify's, guard's), each under `/<upstream
// registry>/<path>` where the nodes' hosts.toml look. The executor pushes what
// `kubemix up --images` was given before the check (Task.pushesImages); the
// check asks the registry itself, from the services node, for every manifest;
// the apply names what is still missing and fails. kubeadm init waits for it.
import { SERVICES } from '../../matrix/index.js';
import { imagesFromServicesRegistry, type ClusterImage } from '../../model/images.js';
import type { ClusterModel } from '../../model/resolve.js';
import { servicesFacts } from '../../render/services/facts.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import { sh, task, taskId } from '../task.js';
import type { Task } from '../types.js';
import { SECRET } from './registry-scripts.js';

export const IMAGES_STAGE = 'task-download-images';

const ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** `/v2/<upstream registry>/<path>/manifests/<digest or tag>` of an image in the services registry. */
export function servicesManifestPath(i: ClusterImage): string {
  return `/v2/${i.registry}/${i.repository}/manifests/${i.digest ?? i.tag ?? 'latest'}`;
}

/** The check (and, with `hint`, the apply: the same, saying first how to push what is missing). */
function verifyScript(host: string, images: readonly ClusterImage[], hint = false): ShellText {
  const endpoint = `${host}:${SERVICES.registryPort}`;
  const say = hint
    ? shellCode(
        'echo "push them: kubemix up SPEC --images BUNDLE (kubemix images pull SPEC --out BUNDLE on a connected machine)" >&2\n',
      )
    : shellCode('');
  // -e: a temporary file that cannot be written fails the check at once, not later through curl for a reason it cannot name.
  return shell`set -eu
${say}work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat > "$work/ca.crt" <<'KUBEMIX_EOF'
{{secret:${SECRET.caCert}}}
KUBEMIX_EOF
cat > "$work/curlrc" <<'KUBEMIX_EOF'
user = "${SERVICES.registryUser}:{{secret:${SECRET.registryPassword}}}"
KUBEMIX_EOF
missing=0
for path in ${images.map(servicesManifestPath)}; do
  curl -fsS -o /dev/null -I --noproxy '*' --cacert "$work/ca.crt" -K "$work/curlrc" --resolve ${`${endpoint}:127.0.0.1`} -H ${`Accept: ${ACCEPT}`} ${`https://${endpoint}`}"$path" 2>/dev/null || { echo "not in the registry: $path" >&2; missing=1; }
done
exit "$missing"
`;
}

export function registryImagesTask(model: ClusterModel): Task[] {
  const facts = servicesFacts(model);
  if (!model.airGapped || facts?.toggles.registry !== true) return [];
  const images = imagesFromServicesRegistry(model);
  return [
    task({
      stage: IMAGES_STAGE,
      host: facts.node.name,
      name: 'registry-images',
      description: `${images.length} images in the services registry (pushed from up --images), each where the nodes pull it`,
      after: [taskId('task-create-services', facts.node.name, 'registry')],
      check: sh(verifyScript(facts.registryHost, images)),
      apply: sh(verifyScript(facts.registryHost, images, true)),
      secrets: [SECRET.caCert, SECRET.registryPassword],
      pushesImages: { registry: facts.registryEndpoint, port: SERVICES.registryPort },
      timeoutSeconds: 3600,
    }),
  ];
}
