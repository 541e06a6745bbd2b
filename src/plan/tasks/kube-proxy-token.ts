// Earlier kubemix versions minted one 90-day ServiceAccount token for every
// Windows kube-proxy and flanneld service on the first controller (admin.conf,
// `kubectl create token`) and kept the copy it captured under
// /etc/kubemix/secrets. The Windows pods now get their own tokens from the
// kubelet (render/manifests/windows-hostprocess.ts); this task removes those
// copies so no long-lived token lies on the controller. The tokens themselves
// stay valid until they expire (they are bound to no object):
// docs/windows.md says how to revoke them at once.
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { shell, shellLines } from '../../util/escape/index.js';
import { sh, task } from '../task.js';
import type { Task } from '../types.js';
import { linuxNodes } from './linux-prep.js';
import { windowsWorkers } from './windows.js';

const SECRETS_DIR = '/etc/kubemix/secrets';

/** The files earlier versions minted the Windows service tokens into. */
export const LEGACY_TOKEN_FILES = [SECRET_NAMES.kubeProxyWindowsToken, SECRET_NAMES.flannelWindowsToken].map(
  (n) => `${SECRETS_DIR}/${n}`,
);

export function legacyTokenTasks(model: ClusterModel): Task[] {
  if (windowsWorkers(model).length === 0) return [];
  const host = linuxNodes(model).find((n) => n.role === 'control-plane')?.name;
  if (host === undefined) return [];
  return [
    task({
      stage: 'task-deploy-cluster',
      host,
      name: 'windows-legacy-tokens',
      description: 'remove the Windows service tokens earlier kubemix versions minted here (the pods have their own)',
      check: sh(
        shellLines(
          LEGACY_TOKEN_FILES.map((f) => shell`[ ! -e ${f} ]`),
          ' && ',
        ),
      ),
      apply: sh(shell`rm -f ${LEGACY_TOKEN_FILES} ${LEGACY_TOKEN_FILES.map((f) => `${f}.new`)}`),
      timeoutSeconds: 30,
    }),
  ];
}
