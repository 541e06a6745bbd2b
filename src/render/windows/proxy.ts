// A Windows worker's pod-network steps around the flanneld and kube-proxy
// HostProcess pods: the files they read from the host (before the join), the
// CNI config (after flannel's network exists), and the wait for kube-proxy.
// The source VIP is the kube-proxy launcher's (launchers.ts), at every start.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { sha256Hex } from '../../util/json.js';
import { cniConfig } from './network.js';
import { WIN } from './paths.js';
import { q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

export function cniConfigStep(model: ClusterModel, node: PlanNode): WindowsScripts {
  const hash = sha256Hex(cniConfig(model, node)).toUpperCase();
  const name = WIN.cniConf.split('\\').pop() ?? '';
  // The CNI directory must hold only this file: the runtime takes the first one it finds.
  const apply = `foreach ($f in Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File) {
  if ($f.Name -ne ${q(name)}) { Remove-Item -Force -LiteralPath $f.FullName }
}
if ((Get-FileHash -Algorithm SHA256 -LiteralPath ${q(WIN.cniConf)}).Hash -ne ${q(hash)}) { throw 'the CNI config on the host differs from the plan' }
`;
  const check = checkThat(
    `(@(Get-ChildItem -LiteralPath ${q(WIN.cniConfDir)} -File -ErrorAction SilentlyContinue).Count -eq 1) -and (Test-Path -LiteralPath ${q(WIN.cniConf)}) -and (Get-FileHash -Algorithm SHA256 -LiteralPath ${q(WIN.cniConf)}).Hash -eq ${q(hash)}`,
  );
  return { check, apply };
}

/** kube-proxy's health endpoint (KubeProxyConfiguration healthzBindAddress default 0.0.0.0:10256): 200 once it has synced. */
export const KUBE_PROXY_HEALTHZ = 'http://127.0.0.1:10256/healthz';

const HEALTHY = `((& (Join-Path $env:SystemRoot 'System32\\curl.exe') --silent --noproxy '*' --max-time 5 --output NUL --write-out '%{http_code}' ${q(KUBE_PROXY_HEALTHZ)}) -eq '200')`;

/**
 * After the join: the kube-proxy-windows pod (its launcher, then kube-proxy)
 * runs on the node and has programmed HNS once (its healthz answers 200).
 */
export function kubeProxyPod(seconds: number): WindowsScripts {
  return {
    check: checkThat(`($null -ne (Get-Process -Name 'kube-proxy' -ErrorAction SilentlyContinue)) -and ${HEALTHY}`),
    apply: `$deadline = (Get-Date).AddSeconds(${seconds})
while (-not (($null -ne (Get-Process -Name 'kube-proxy' -ErrorAction SilentlyContinue)) -and ${HEALTHY})) {
  if ((Get-Date) -gt $deadline) { throw ${q(`kube-proxy did not answer ${KUBE_PROXY_HEALTHZ} with 200 within ${seconds} s: see kubectl -n kube-system logs ds/kube-proxy-windows and ${WIN.kubeProxyConfig}`)} }
  Start-Sleep -Seconds 5
}
`,
  };
}

/**
 * Before the join: the files the flanneld and kube-proxy pods read from the
 * host (uploaded with this step), each as the plan renders it.
 */
export function hostProcessFiles(
  files: readonly { readonly remotePath: string; readonly content: string }[],
): WindowsScripts {
  const same = files.map(
    (f) =>
      `(Test-Path -LiteralPath ${q(f.remotePath)}) -and (Get-FileHash -Algorithm SHA256 -LiteralPath ${q(f.remotePath)}).Hash -eq ${q(sha256Hex(f.content).toUpperCase())}`,
  );
  return {
    check: checkThat(same.map((c) => `(${c})`).join(' -and ')),
    apply: `New-Item -ItemType Directory -Force -Path ${q(WIN.kubeProxyDir)}, ${q(`${WIN.logs}\\kube-proxy`)} | Out-Null
foreach ($f in ${qList(files.map((f) => f.remotePath))}) { if (-not (Test-Path -LiteralPath $f)) { throw "$f was not uploaded" } }
`,
  };
}
