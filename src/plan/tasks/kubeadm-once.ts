// `kubeadm init` and `kubeadm join` run once per node, and a run that was
// interrupted (kubemix killed, the connection lost, the task's time limit)
// is finished by the next one. kubeadm itself cannot resume: its preflight
// refuses a second init or join on a node where the first one left files,
// ports in use or a running kubelet. So kubemix marks the start and the end
// of its own run beside the configuration it uploaded: started without done
// means kubemix's own kubeadm was interrupted there, and only then does the
// next run `kubeadm reset` the node before starting again. A node whose
// control plane or kubelet kubemix did not set up is never reset: the task
// fails and says so. A node done before stays done: its API server or kubelet
// is waited for, never initialised or joined again.
import { CONTAINERD_PATHS } from '../../render/containerd/paths.js';
import { KUBEADM_DIR } from '../../render/kubeadm/config.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';

const ADMIN = '--kubeconfig=/etc/kubernetes/admin.conf';
const CRI = `--cri-socket=unix://${CONTAINERD_PATHS.socket}`;
/** How long a re-run waits for what a finished init or join left running (an API server, a kubelet) to answer. */
export const ANSWER_WAIT_SECONDS = 300;

export type KubeadmRun = 'init' | 'join';

/** The markers of kubemix's own kubeadm run on the node. */
export function markers(run: KubeadmRun): { readonly started: string; readonly done: string } {
  return { started: `${KUBEADM_DIR}/${run}.started`, done: `${KUBEADM_DIR}/${run}.done` };
}

/**
 * The check: done, or (a cluster kubemix set up before the markers existed)
 * kubeadm's own files and a live service; never while kubemix's run is
 * marked started and not done.
 */
export function onceCheck(run: KubeadmRun, live: ShellText): ShellText {
  const m = markers(run);
  return shell`[ ! -e ${m.started} ] || [ -e ${m.done} ] || exit 1\n${live}`;
}

/**
 * The apply around `body` (the commands that do the init or join): after a
 * finished run, wait for `live`; after an interrupted one of kubemix's, reset
 * first; over kubeadm files kubemix did not write (`foreign`), refuse.
 */
export function onceApply(
  run: KubeadmRun,
  body: ShellText,
  live: ShellText,
  foreign: ShellText,
  what: string,
): ShellText {
  const m = markers(run);
  return shell`set -eu
if [ -e ${m.done} ]; then
  # kubemix's ${run} finished here before: wait for ${what}, never ${run} again.
  waited=0
  until ${live}; do
    [ "$waited" -lt ${ANSWER_WAIT_SECONDS} ] || { echo ${`kubeadm ${run} finished here before, but ${what} does not answer after ${ANSWER_WAIT_SECONDS} s`} >&2; exit 1; }
    sleep 5; waited=$((waited + 5))
  done
  exit 0
fi
if [ -e ${m.started} ]; then
  echo ${`kubemix's kubeadm ${run} was interrupted here: kubeadm reset, then ${run} again`} >&2
  kubeadm reset --force ${CRI}
elif ${foreign}; then
  echo ${`this node holds kubeadm files kubemix did not write (${run} was never started by kubemix here); kubemix will not replace them: run kubeadm reset on it yourself if that is meant`} >&2
  exit 1
fi
: > ${m.started}
${body}
: > ${m.done}`;
}

/** The first control plane: initialised once, the API server answering. */
export function initScripts(body: ShellText): { check: ShellText; apply: ShellText } {
  const live = shell`[ -f /etc/kubernetes/admin.conf ] && kubectl ${ADMIN} get --raw=/readyz >/dev/null 2>&1`;
  const foreign = shellCode(
    '[ -e /etc/kubernetes/manifests/kube-apiserver.yaml ] || [ -e /etc/kubernetes/admin.conf ]',
  );
  return { check: onceCheck('init', live), apply: onceApply('init', body, live, foreign, 'the API server') };
}

/** A joining node: joined once, its kubelet running. */
export function joinScripts(body: ShellText): { check: ShellText; apply: ShellText } {
  const live = shellCode('[ -f /etc/kubernetes/kubelet.conf ] && systemctl is-active --quiet kubelet');
  const foreign = shellCode('[ -e /etc/kubernetes/kubelet.conf ] || [ -e /etc/kubernetes/bootstrap-kubelet.conf ]');
  // A kubelet stopped since the join is started again; kubeadm's files are all there.
  const restart = shell`{ systemctl is-active --quiet kubelet || systemctl start kubelet; ${live}; }`;
  return { check: onceCheck('join', live), apply: onceApply('join', body, restart, foreign, 'the kubelet') };
}
