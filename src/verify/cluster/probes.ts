// The cross-OS connectivity matrix, pure: which probe pods and Services to
// create, which cells each source pod probes, the scripts that probe them
// (BusyBox sh on Linux, PowerShell on Windows). Results come back without
// pod exec: each client pod runs its cells in parallel, judges each the way
// upstream's hybrid network e2e test does (wait until it succeeds, then
// require it to keep succeeding for a short window) and prints one
// `KUBEMIX-CELL` line per cell to its log, which verify reads.
import { shell } from '../../util/escape/index.js';
import type { ExpectedNode } from './expect.js';

export const PROBE_NAMESPACE = 'kubemix-verify';
export const PROBE_LABEL = 'kubemix.dev/verify';
export const ECHO_PORT = 8080;
/** Seconds a cell may take to succeed the first time. */
export const CELL_DEADLINE_S = 60;
/** Successes in a row, one second apart, after the first (upstream's hybrid test: "consistently"). */
export const CELL_HOLD = 3;
export const MARK = 'KUBEMIX-CELL';

export type Os = 'linux' | 'windows';
export type CellKind = 'http' | 'dns' | 'tcp';

/** One probe from a source pod: a URL to GET (the answer names the echo pod), a name to resolve, a TCP connect. */
export interface Cell {
  readonly id: string;
  readonly probe: 'pod-ip' | 'svc-ip' | 'svc-dns' | 'pod-dns' | 'host-pod' | 'egress';
  readonly source: string;
  readonly target: string;
  readonly kind: CellKind;
  /** `host:port` for http and tcp, a name for dns. */
  readonly arg: string;
  /** http: echo pods whose name may answer. */
  readonly answers?: readonly string[];
}

export type Manifest = Record<string, unknown>;

export const echoName = (node: string): string => `echo-${node}`;
export const clientName = (node: string): string => `probe-${node}`;
/** The hostNetwork (Linux) or HostProcess (Windows) probe pod of a node. */
export const hostClientName = (node: string): string => `host-${node}`;
export const SERVICES = { linux: 'svc-linux', windows: 'svc-windows', mixed: 'svc-mixed', nodeport: 'svc-nodeport' };

function placement(n: ExpectedNode): Manifest {
  return {
    nodeSelector: { 'kubernetes.io/hostname': n.name, 'kubernetes.io/os': n.os },
    // Every taint tolerated: the probe must land on this node, control planes included.
    tolerations: [{ operator: 'Exists' }],
    ...(n.runtimeClass === undefined ? {} : { runtimeClassName: n.runtimeClass }),
  };
}

const podEnv = [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];

/** An HTTP server on ECHO_PORT answering its pod name. */
export function echoPod(n: ExpectedNode): Manifest {
  const command =
    n.os === 'linux'
      ? [
          'sh',
          '-c',
          `mkdir -p /tmp/w && echo "$POD_NAME" > /tmp/w/index.html && exec httpd -f -p ${ECHO_PORT} -h /tmp/w`,
        ]
      : ['powershell.exe', '-NoProfile', '-NonInteractive', '-Command', windowsEchoScript()];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: echoName(n.name),
      namespace: PROBE_NAMESPACE,
      labels: { [PROBE_LABEL]: 'echo', 'kubemix.dev/os': n.os },
    },
    spec: {
      ...placement(n),
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'echo',
          image: n.probeImage,
          command,
          env: podEnv,
          ports: [{ containerPort: ECHO_PORT }],
          readinessProbe: { tcpSocket: { port: ECHO_PORT }, periodSeconds: 2 },
        },
      ],
    },
  };
}

export function windowsEchoScript(): string {
  return [
    "$ErrorActionPreference = 'Stop'",
    `$l = [Net.Sockets.TcpListener]::new([Net.IPAddress]::Any, ${ECHO_PORT})`,
    '$l.Start()',
    'while ($true) {',
    '  $c = $l.AcceptTcpClient()',
    '  $s = $c.GetStream()',
    '  $r = [IO.StreamReader]::new($s)',
    '  while ($r.ReadLine()) { }',
    '  $b = [Text.Encoding]::ASCII.GetBytes("HTTP/1.0 200 OK`r`nConnection: close`r`n`r`n$env:POD_NAME`n")',
    '  $s.Write($b, 0, $b.Length)',
    '  $c.Close()',
    '}',
  ].join('\n');
}

/** The Services: backed by Linux echo pods, by Windows ones, by both; a NodePort onto both. */
export function services(oses: readonly Os[]): Manifest[] {
  const svc = (name: string, selector: Record<string, string>, type = 'ClusterIP'): Manifest => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: PROBE_NAMESPACE, labels: { [PROBE_LABEL]: 'service' } },
    spec: { type, selector: { [PROBE_LABEL]: 'echo', ...selector }, ports: [{ port: 80, targetPort: ECHO_PORT }] },
  });
  return [
    ...oses.map((os) => svc(SERVICES[os], { 'kubemix.dev/os': os })),
    ...(oses.length > 1 ? [svc(SERVICES.mixed, {})] : []),
    svc(SERVICES.nodeport, {}, 'NodePort'),
  ];
}

export interface EchoEndpoint {
  readonly node: ExpectedNode;
  readonly ip: string;
}

const hostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

function adder(source: ExpectedNode, out: Cell[]): (c: Omit<Cell, 'id' | 'source'>) => void {
  return (c) => void out.push({ id: `cluster/${c.probe}/${source.name}/${c.target}`, source: source.name, ...c });
}

/**
 * The cells of one source node's probe pod, given the echo pods' IPs and the
 * Services' ClusterIPs; `egress` the `HOST:PORT` targets outside the cluster
 * the user named (none unless asked: no traffic leaves the cluster otherwise).
 */
export function cellsOf(
  source: ExpectedNode,
  echoes: readonly EchoEndpoint[],
  clusterIps: Readonly<Record<string, string>>,
  domain: string,
  egress: readonly string[] = [],
): Cell[] {
  const out: Cell[] = [];
  const add = adder(source, out);
  const host = hostPort;
  for (const e of echoes)
    add({
      probe: 'pod-ip',
      target: e.node.name,
      kind: 'http',
      arg: host(e.ip, ECHO_PORT),
      answers: [echoName(e.node.name)],
    });
  const backends = (svc: string): string[] =>
    echoes.filter((e) => svc === SERVICES.mixed || SERVICES[e.node.os] === svc).map((e) => echoName(e.node.name));
  for (const svc of [SERVICES.linux, SERVICES.windows, SERVICES.mixed]) {
    const ip = clusterIps[svc];
    if (ip === undefined) continue;
    add({ probe: 'svc-ip', target: svc, kind: 'http', arg: host(ip, 80), answers: backends(svc) });
    add({
      probe: 'svc-dns',
      target: svc,
      kind: 'http',
      arg: `${svc}.${PROBE_NAMESPACE}.svc.${domain}:80`,
      answers: backends(svc),
    });
  }
  add({ probe: 'pod-dns', target: 'kubernetes.default', kind: 'dns', arg: `kubernetes.default.svc.${domain}` });
  for (const target of egress) add({ probe: 'egress', target, kind: 'tcp', arg: target });
  return out;
}

/** Host → pod: from the node's own network namespace (hostNetwork / HostProcess) to each echo pod by IP. */
export function hostCellsOf(source: ExpectedNode, echoes: readonly EchoEndpoint[]): Cell[] {
  const out: Cell[] = [];
  const add = adder(source, out);
  for (const e of echoes)
    add({
      probe: 'host-pod',
      target: e.node.name,
      kind: 'http',
      arg: hostPort(e.ip, ECHO_PORT),
      answers: [echoName(e.node.name)],
    });
  return out;
}

/**
 * The backends a cell must hear from, each at least once, before it holds:
 * a Service's every echo pod (comma-separated), so a path to one of them that
 * is broken fails the cell every time rather than when the load balancer
 * happens to pick it; `-` for a cell with one possible answer.
 */
export function wanted(c: Cell): string {
  return c.kind === 'http' && (c.answers?.length ?? 0) > 1 ? (c.answers ?? []).join(',') : '-';
}

/** Cells as the scripts read them: one `id kind arg wanted` per line. */
function cellLines(cells: readonly Cell[]): string {
  return cells.map((c) => `${c.id} ${c.kind} ${c.arg} ${wanted(c)}`).join('\n');
}

/** How a cell's output names the backends that never answered (both scripts and the NodePort probe print it). */
export const NEVER_ANSWERED = 'never answered by';
/**
 * The pause after an answer from a backend already heard, while others have
 * not answered yet: short, so a Service with many backends picked at random
 * (kube-proxy's iptables mode; N backends take about N·ln N tries) is covered
 * well within the deadline. A failed try still waits a second.
 */
export const SPREAD_MS = 100;

/** How long a cell may take to succeed first, and how many successes in a row it must then hold; one HTTP try's limit. */
export interface CellTiming {
  readonly deadlineS: number;
  readonly hold: number;
  readonly httpTryS?: number;
}

const TIMING: CellTiming = { deadlineS: CELL_DEADLINE_S, hold: CELL_HOLD };

/**
 * How long one HTTP try may take, the name lookup included: a pod resolves a
 * Service name through its search list (ndots 5: four names, A and AAAA each)
 * and the resolver waits 5 s for a lost answer; 3 s cut good tries short on an
 * emulated cluster whose CoreDNS was on the other node (run 25).
 */
export const HTTP_TRY_S = 10;

/**
 * BusyBox sh. http: `timeout N wget`, not `wget -T N`: Debian's BusyBox before
 * 1.36.1-5 is built without wget's timeout option and crashes on -T (a
 * segmentation fault, every try: the real-cluster tier's run 23, with the probe
 * image built from Debian 12's busybox-static). tcp: `nc -w 3 HOST PORT -e true` runs `true` once connected,
 * so exit 0 means the TCP connect succeeded within 3 s. BusyBox nc takes
 * -w and -e in both its builds: the small one (where -e comes after the
 * address) and the netcat-1.10 one (where everything after -e is the program).
 */
export function linuxClientScript(cells: readonly Cell[], t: CellTiming = TIMING): string {
  const tryS = t.httpTryS ?? HTTP_TRY_S;
  // Built with `shell`: the cells go into a here-document with a quoted delimiter, as they are (refused if a line were CELLS).
  return shell`set -u
probe() {
  case "$1" in
    http) timeout ${tryS} wget -q -O - "http://$2/" 2>&1 || { rc=$?; [ $rc -lt 124 ] || echo "no answer within ${tryS} s (name lookup and request)"; return $rc; } ;;
    dns) nslookup "$2" 2>&1 ;;
    tcp) h=\${2%:*}; h=\${h#\\[}; h=\${h%\\]}; nc -w 3 "$h" "\${2##*:}" -e true 2>&1 && echo "connected to $2" ;;
  esac
}
unseen() { for w in $(printf '%s' "$1" | tr , ' '); do case "$2" in *",$w,"*) ;; *) printf '%s ' "$w" ;; esac; done; }
names() { set -- $(printf '%s' "$1" | tr , ' '); printf '%s' "$*"; }
cell() {
  end=$(( $(date +%s) + ${t.deadlineS} )); tries=0; seen=,
  while :; do
    tries=$((tries + 1)); out=$(probe "$2" "$3"); rc=$?; more=0
    if [ $rc -eq 0 ] && [ "$4" != - ]; then
      name=$(printf '%s' "$out" | head -n 1)
      case "$seen" in *",$name,"*) ;; *) seen="$seen$name," ;; esac
      missing=$(unseen "$4" "$seen")
      [ -z "$missing" ] || { rc=3; more=1; out="${NEVER_ANSWERED} $missing(answered by: $(names "$seen"))"; }
    fi
    [ $rc -eq 0 ] && break
    [ "$(date +%s)" -ge $end ] && break
    # An answer from a backend already heard: ask again soon (a BusyBox without fractional sleep waits 1 s).
    if [ $more = 1 ]; then sleep ${SPREAD_MS / 1000} 2>/dev/null || sleep 1; else sleep 1; fi
  done
  # Out of time after a failed try, but some backends answered before: name those that never did
  # (a try sent to a silent backend fails; run 24 reported only "never succeeded").
  if [ $rc -ne 0 ] && [ $rc -ne 3 ] && [ "$seen" != , ]; then
    missing=$(unseen "$4" "$seen")
    [ -z "$missing" ] || out="${NEVER_ANSWERED} $missing(answered by: $(names "$seen"))"
  fi
  held=0
  while [ $rc -eq 0 ] && [ $held -lt ${t.hold} ]; do
    sleep 1; out=$(probe "$2" "$3"); rc=$?; held=$((held + 1))
  done
  [ $rc -eq 0 ] && r=ok || r=fail
  echo "${MARK} $1 $r $tries $held $(printf '%s' "$out" | tr '\\n' ' ' | cut -c1-300)"
}
while read -r id kind arg want; do cell "$id" "$kind" "$arg" "$want" & done <<'CELLS'
${cellLines(cells)}
CELLS
wait
echo "${MARK}-DONE"
`.text;
}

export function windowsClientScript(cells: readonly Cell[]): string {
  return `$ErrorActionPreference = 'Stop'
$cells = @'
${cellLines(cells)}
'@ -split "\`n" | Where-Object { $_.Trim() -ne '' }
$work = {
  param([string]$Line)
  $ErrorActionPreference = 'Stop'
  $id, $kind, $arg, $want = $Line.Trim() -split ' ', 4
  $wanted = @(if ($want -and $want -ne '-') { $want -split ',' })
  $seen = @{}
  $probe = {
    try {
      if ($kind -eq 'http') {
        $r = Invoke-WebRequest -UseBasicParsing -DisableKeepAlive -TimeoutSec 3 -Uri "http://$arg/"
        @{ ok = $true; out = [string]$r.Content }
      } elseif ($kind -eq 'tcp') {
        $h, $p = $arg -split ':(?=\\d+$)'
        $c = [Net.Sockets.TcpClient]::new()
        try {
          if (-not $c.ConnectAsync($h.Trim('[', ']'), [int]$p).Wait(3000)) { throw "no connection in 3 s" }
          @{ ok = $true; out = "connected to $arg" }
        } finally {
          $c.Dispose()
        }
      } else {
        $a = [Net.Dns]::GetHostAddresses($arg)
        @{ ok = $true; out = ($a -join ' ') }
      }
    } catch {
      @{ ok = $false; out = $_.Exception.Message }
    }
  }
  $end = (Get-Date).AddSeconds(${CELL_DEADLINE_S})
  $tries = 0
  do {
    $tries++
    $res = & $probe
    $more = $false
    if ($res.ok -and $wanted.Count -gt 0) {
      $seen[(([string]$res.out).Trim() -split '\r?\n')[0].Trim()] = $true
      $missing = @($wanted | Where-Object { -not $seen.ContainsKey($_) })
      if ($missing.Count -gt 0) {
        $res = @{ ok = $false; out = "${NEVER_ANSWERED} $($missing -join ' ') (answered by: $($seen.Keys -join ' '))" }
        $more = $true
      }
    }
    if ($more) { Start-Sleep -Milliseconds ${SPREAD_MS} } elseif (-not $res.ok) { Start-Sleep -Seconds 1 }
  } until ($res.ok -or (Get-Date) -ge $end)
  # Out of time after a failed try, but some backends answered before: name those that never did.
  if (-not $res.ok -and $seen.Count -gt 0) {
    $missing = @($wanted | Where-Object { -not $seen.ContainsKey($_) })
    if ($missing.Count -gt 0) { $res = @{ ok = $false; out = "${NEVER_ANSWERED} $($missing -join ' ') (answered by: $($seen.Keys -join ' '))" } }
  }
  $held = 0
  while ($res.ok -and $held -lt ${CELL_HOLD}) {
    Start-Sleep -Seconds 1
    $res = & $probe
    $held++
  }
  $verdict = if ($res.ok) { 'ok' } else { 'fail' }
  $text = ($res.out -replace '\\s+', ' ')
  if ($text.Length -gt 300) { $text = $text.Substring(0, 300) }
  "${MARK} $id $verdict $tries $held $text"
}
$jobs = foreach ($line in $cells) { Start-Job -ScriptBlock $work -ArgumentList $line }
$jobs | Wait-Job | Receive-Job
"${MARK}-DONE"
`;
}

/**
 * The one-shot pod that probes a source node's cells and prints them to its
 * log. `host`: in the node's own network namespace instead of a pod network
 * one: `hostNetwork` on Linux, a HostProcess container on Windows (which
 * runs as a process on the host, so its image's OS build need not match the
 * node's; Kubernetes requires hostNetwork with it). Both need the namespace's
 * Pod Security level `privileged` (baseline forbids host namespaces).
 */
export function clientPod(n: ExpectedNode, cells: readonly Cell[], host = false): Manifest {
  const command =
    n.os === 'linux'
      ? ['sh', '-c', linuxClientScript(cells)]
      : ['powershell.exe', '-NoProfile', '-NonInteractive', '-Command', windowsClientScript(cells)];
  const hostSpec = !host
    ? {}
    : n.os === 'linux'
      ? { hostNetwork: true }
      : {
          hostNetwork: true,
          securityContext: { windowsOptions: { hostProcess: true, runAsUserName: 'NT AUTHORITY\\SYSTEM' } },
        };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: host ? hostClientName(n.name) : clientName(n.name),
      namespace: PROBE_NAMESPACE,
      labels: { [PROBE_LABEL]: 'client', 'kubemix.dev/os': n.os },
      // The cells, for whoever reads the pod (and the API stand-in in the tests).
      annotations: { 'kubemix.dev/cells': JSON.stringify(cells.map((c) => ({ id: c.id, kind: c.kind, arg: c.arg }))) },
    },
    spec: {
      ...placement(n),
      ...hostSpec,
      restartPolicy: 'Never',
      // Nothing keeps running if verify dies: the kubelet stops the pod after this.
      activeDeadlineSeconds: CELL_DEADLINE_S + CELL_HOLD + 120,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'probe', image: n.probeImage, command, env: podEnv }],
    },
  };
}

/** The Pod Security Admission label that sets a namespace's enforced level (privileged, baseline, restricted). */
export const PSA_ENFORCE = 'pod-security.kubernetes.io/enforce';

/** The probe namespace; `privileged` only when host → pod cells are to run (hostNetwork, HostProcess). */
export function namespaceManifest(privileged: boolean): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: PROBE_NAMESPACE,
      labels: { [PROBE_LABEL]: 'true', ...(privileged ? { [PSA_ENFORCE]: 'privileged' } : {}) },
    },
  };
}
