// task-deploy-cluster on the first controller, when there are Windows
// workers: mint the token of kube-system/kube-proxy with the TokenRequest API
// (`kubectl create token`) into a 0600 file the executor captures as
// `kube-proxy-windows-token`. Every win-kube-proxy task waits for it; the
// Windows nodes then renew their own copy daily (render/windows/token.ts).
import type { ClusterModel } from '../../model/resolve.js';
import { KUBE_PROXY_TOKEN } from '../../render/manifests/kube-proxy-token.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { sh, task, taskId } from '../task.js';
import type { Task } from '../types.js';
import { linuxNodes } from './linux-prep.js';
import { windowsWorkers } from './windows.js';

const DEPLOY = 'task-deploy-cluster';
const NAME = 'kube-proxy-windows-token';
/** Where the minted token lies on the first controller (captured by the executor). */
export const KUBE_PROXY_TOKEN_FILE = '/etc/kubemix/secrets/kube-proxy-windows-token';

function firstController(model: ClusterModel): string | undefined {
  if (windowsWorkers(model).length === 0) return undefined;
  return linuxNodes(model).find((n) => n.role === 'control-plane')?.name;
}

/** What every Windows kube-proxy waits for: the minting task, by id (empty without Windows workers). */
export function kubeProxyTokenTaskIds(model: ClusterModel): string[] {
  const host = firstController(model);
  return host === undefined ? [] : [taskId(DEPLOY, host, NAME)];
}

export function kubeProxyTokenTasks(model: ClusterModel): Task[] {
  const host = firstController(model);
  if (host === undefined) return [];
  const { namespace, serviceAccount, lifetimeHours, renewAfterHours } = KUBE_PROXY_TOKEN;
  const f = KUBE_PROXY_TOKEN_FILE;
  const mint = task({
    stage: DEPLOY, host, name: NAME,
    description: `mint a ${lifetimeHours}h TokenRequest token for ${namespace}/${serviceAccount} (system:node-proxier) for the Windows kube-proxy`,
    // The manifests carry the Role that lets Windows nodes renew the token.
    after: [taskId(DEPLOY, host, 'cluster-manifests')],
    // A copy younger than half its lifetime is kept; older, a re-run mints a new one.
    check: sh(`[ -s ${f} ] && [ -n "$(find ${f} -mmin -${renewAfterHours * 60})" ]`),
    apply: sh(`set -eu
umask 077
install -d -m 0700 ${f.slice(0, f.lastIndexOf('/'))}
kubectl --kubeconfig=/etc/kubernetes/admin.conf -n ${namespace} create token ${serviceAccount} --duration=${lifetimeHours}h > ${f}.new
[ -s ${f}.new ] || { echo 'kubectl create token printed nothing' >&2; exit 1; }
mv -f ${f}.new ${f}`),
    captures: [{ name: SECRET_NAMES.kubeProxyWindowsToken, remotePath: f }],
    timeoutSeconds: 60,
  });
  return [mint];
}
