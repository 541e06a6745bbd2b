// task-deploy-cluster on the first controller, when there are Windows
// workers: mint the ServiceAccount tokens of the Windows node services with
// the TokenRequest API (`kubectl create token`, admin.conf) into 0600 files
// the executor captures. kube-proxy's always; flanneld's when it runs as a
// service (a HostProcess pod uses its own projected token). Renewal is a
// re-run of this task (every `kubemix up`): no ServiceAccount may mint its
// own tokens (render/manifests/kube-proxy-token.ts).
import type { ClusterModel } from '../../model/resolve.js';
import {
  FLANNEL_WINDOWS_TOKEN,
  KUBE_PROXY_TOKEN,
  WINDOWS_TOKEN_LIFETIME,
  type WindowsToken,
} from '../../render/manifests/kube-proxy-token.js';
import { sh, task, taskId } from '../task.js';
import type { Task } from '../types.js';
import { shell } from '../../util/escape/index.js';
import { linuxNodes } from './linux-prep.js';
import { windowsWorkers } from './windows.js';

const DEPLOY = 'task-deploy-cluster';
const SECRETS_DIR = '/etc/kubemix/secrets';
/** Where the minted kube-proxy token lies on the first controller (captured by the executor). */
export const KUBE_PROXY_TOKEN_FILE = `${SECRETS_DIR}/${KUBE_PROXY_TOKEN.secret}`;

function firstController(model: ClusterModel): string | undefined {
  if (windowsWorkers(model).length === 0) return undefined;
  return linuxNodes(model).find((n) => n.role === 'control-plane')?.name;
}

/** The tokens this cluster's Windows nodes need minted. */
export function windowsTokens(model: ClusterModel): WindowsToken[] {
  const serviceFlannel = model.overlay.plugin === 'flannel' && model.windowsHostProcess === undefined;
  return [KUBE_PROXY_TOKEN, ...(serviceFlannel ? [FLANNEL_WINDOWS_TOKEN] : [])];
}

/** What every Windows kube-proxy waits for: the minting task, by id (empty without Windows workers). */
export function kubeProxyTokenTaskIds(model: ClusterModel): string[] {
  const host = firstController(model);
  return host === undefined ? [] : [taskId(DEPLOY, host, KUBE_PROXY_TOKEN.secret)];
}

/** What every Windows flanneld service waits for (empty in HostProcess mode or without flannel). */
export function flannelTokenTaskIds(model: ClusterModel): string[] {
  const host = firstController(model);
  return host === undefined || !windowsTokens(model).includes(FLANNEL_WINDOWS_TOKEN)
    ? []
    : [taskId(DEPLOY, host, FLANNEL_WINDOWS_TOKEN.secret)];
}

function mintTask(host: string, token: WindowsToken): Task {
  const { lifetimeHours, renewAfterHours } = WINDOWS_TOKEN_LIFETIME;
  const f = `${SECRETS_DIR}/${token.secret}`;
  return task({
    stage: DEPLOY,
    host,
    name: token.secret,
    description: `mint a ${lifetimeHours}h TokenRequest token for ${token.namespace}/${token.serviceAccount}, ${token.purpose}`,
    // The manifests create the ServiceAccounts and their bindings.
    after: [taskId(DEPLOY, host, 'cluster-manifests')],
    // A copy younger than renewAfterHours is kept; older, a re-run mints a new one the nodes then take.
    check: sh(shell`[ -s ${f} ] && [ -n "$(find ${f} -mmin -${renewAfterHours * 60})" ]`),
    apply: sh(shell`set -eu
umask 077
install -d -m 0700 ${SECRETS_DIR}
kubectl --kubeconfig=/etc/kubernetes/admin.conf -n ${token.namespace} create token ${token.serviceAccount} --duration=${`${lifetimeHours}h`} > ${`${f}.new`}
[ -s ${`${f}.new`} ] || { echo 'kubectl create token printed nothing' >&2; exit 1; }
mv -f ${`${f}.new`} ${f}`),
    captures: [{ name: token.secret, remotePath: f }],
    timeoutSeconds: 60,
  });
}

export function kubeProxyTokenTasks(model: ClusterModel): Task[] {
  const host = firstController(model);
  if (host === undefined) return [];
  return windowsTokens(model).map((t) => mintTask(host, t));
}
