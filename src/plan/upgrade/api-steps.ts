// The API-side steps of a node's upgrade or patch (cordon, drain, wait Ready,
// uncordon), run with kubectl on the first control-plane node with
// /etc/kubernetes/admin.conf: kubemix has no client of its own on this path.
// `kubectl drain` evicts through the Eviction API, so PodDisruptionBudgets
// hold (kubernetes.io "Safely Drain a Node"); when it gives up, the script
// names what blocks: the pods left on the node and the budgets that allow
// no disruption now.
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';

const KUBECTL = shellCode('kubectl --kubeconfig=/etc/kubernetes/admin.conf');

export interface CheckAndApply {
  readonly check: ShellText;
  readonly apply: ShellText;
}

/** The Node object's name: kubelets register their hostname in lower case. */
export function nodeObject(name: string): string {
  return name.toLowerCase();
}

/** Exits 0 when the Node's kubelet reports `version` (this node's upgrade is through). */
export function kubeletAtScript(node: string, version: string): ShellText {
  return shell`[ "$(${KUBECTL} get node ${nodeObject(node)} -o jsonpath='{.status.nodeInfo.kubeletVersion}')" = 'v${version}' ]`;
}

export function cordonScripts(node: string, done: ShellText): CheckAndApply {
  const n = nodeObject(node);
  return {
    check: shell`${done} || [ "$(${KUBECTL} get node ${n} -o jsonpath='{.spec.unschedulable}')" = true ]`,
    apply: shell`${KUBECTL} cordon ${n}`,
  };
}

/**
 * `keepDns`: leave CoreDNS on the node (kubectl drain --pod-selector). For
 * the only Linux node that can run it — a single control plane with no Linux
 * worker — evicting CoreDNS leaves both replicas Pending until uncordon, so
 * cluster DNS would be down for the whole upgrade of that node; kept, they
 * keep answering (kubeadm's new CoreDNS rolls out once the node is uncordoned).
 */
export function drainScripts(node: string, done: ShellText, timeoutSeconds: number, keepDns = false): CheckAndApply {
  const n = nodeObject(node);
  const selector = keepDns ? shellCode(" --pod-selector='k8s-app!=kube-dns'") : shellCode('');
  const apply = shell`set -u
if ${KUBECTL} drain ${n} --ignore-daemonsets --delete-emptydir-data${selector} ${`--timeout=${timeoutSeconds}s`}; then exit 0; fi
echo "drain of ${nodeObject(node)} did not finish within ${timeoutSeconds} s; what blocks it:" >&2
echo "pods still on the node (DaemonSet pods stay by design):" >&2
${KUBECTL} get pods --all-namespaces --field-selector ${`spec.nodeName=${n}`} -o wide >&2 || true
echo "PodDisruptionBudgets that allow no disruption now:" >&2
${KUBECTL} get poddisruptionbudgets --all-namespaces -o jsonpath='{range .items[?(@.status.disruptionsAllowed==0)]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}' >&2 || true
echo "the node stays cordoned; free the budget or move the pods, then run the command again" >&2
exit 1`;
  return { check: done, apply };
}

/**
 * Waits until the Node is Ready and reports the target kubelet version. Both
 * are polled together: right after the kubelet's restart the Node still holds
 * the old kubelet's status (Ready, the old version) until the new kubelet
 * posts its own, which on a slow machine takes more than a few seconds (the
 * real-cluster tier's run 37: Ready at once, the version still v1.35.4 10 s
 * after the restart).
 */
export function readyScripts(node: string, version: string | undefined, timeoutSeconds: number): CheckAndApply {
  const n = nodeObject(node);
  // Each read bounded, so the loop keeps its own deadline while the API server does not answer.
  const jsonpath = (path: string) => shell`${KUBECTL} get node ${n} --request-timeout=10s -o ${`jsonpath=${path}`}`;
  const readyPath = '{.status.conditions[?(@.type=="Ready")].status}';
  const ready = shell`[ "$(${jsonpath(readyPath)})" = True ]`;
  if (version === undefined)
    return {
      check: ready,
      apply: shell`set -eu
${KUBECTL} wait --for=condition=Ready ${`node/${n}`} ${`--timeout=${timeoutSeconds}s`}`,
    };
  const versionPath = '{.status.nodeInfo.kubeletVersion}';
  const check = shell`${ready} && [ "$(${jsonpath(versionPath)})" = ${`v${version}`} ]`;
  const apply = shell`set -u
deadline=$(( $(date +%s) + ${String(timeoutSeconds)} ))
until ${check}; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "${n} is not Ready with kubelet v${version} after ${String(timeoutSeconds)} s (Ready: $(${jsonpath(readyPath)} 2>&1), kubelet: $(${jsonpath(versionPath)} 2>&1))" >&2
    exit 1
  fi
  sleep 5
done`;
  return { check, apply };
}

export function uncordonScripts(node: string): CheckAndApply {
  const n = nodeObject(node);
  return {
    check: shell`[ -z "$(${KUBECTL} get node ${n} -o jsonpath='{.spec.unschedulable}')" ]`,
    apply: shell`${KUBECTL} uncordon ${n}`,
  };
}

/**
 * Before anything changes: every kubelet at most the target minor and no more
 * than three minors below it (the skew policy since 1.28), and the API server
 * at the spec's version or already at the target (a resumed upgrade).
 */
export function skewPreflightScript(from: string, to: string): ShellText {
  const minorOf = (v: string): number => Number(v.split('.')[1]);
  return shell`set -eu
server=$(${KUBECTL} version -o json | sed -n 's/.*"gitVersion": *"v\\([0-9.]*\\)".*/\\1/p' | tail -n 1)
case "$server" in ${from}|${to}) ;; *) echo "the API server runs $server; the spec says ${from}: run kubemix up first or fix the spec" >&2; exit 1 ;; esac
${KUBECTL} get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion}{"\\n"}{end}' |
  awk -v hi=${minorOf(to)} -v lo=${minorOf(to) - 3} '{ split(substr($2, 2), v, "."); m = v[2] + 0
    if (m > hi) { print $1 " runs kubelet " $2 ", newer than the target API server" > "/dev/stderr"; bad = 1 }
    if (m < lo) { print $1 " runs kubelet " $2 ", more than 3 minors below the target" > "/dev/stderr"; bad = 1 } }
    END { exit bad }'`;
}
