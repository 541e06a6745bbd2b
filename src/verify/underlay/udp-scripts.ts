// The UDP probe: a listener the check starts on the target (bound to the
// VXLAN port, reporting each expected token it receives, stopping by itself
// once every token arrived or its deadline passed) and a sender on each
// source that sends its token a few times (a single datagram may be lost).
// Linux uses python3's socket module; Windows .NET's UdpClient, with an
// inbound firewall rule of its own for the port that it removes again.
import { psList, psQuote, shell, shellQuote } from '../../util/escape/index.js';
import { MARK, need, type ProbeCommand } from './scripts.js';

const PS_HEAD = "$ErrorActionPreference = 'Stop'\n$ProgressPreference = 'SilentlyContinue'\n";
/** Datagrams each sender sends, 100 ms apart. */
export const UDP_REPEATS = 10;

// argv: port, comma-separated tokens, seconds to wait after it is listening.
const PY_LISTENER = `import socket, sys, time
port = int(sys.argv[1]); want = set(sys.argv[2].split(",")); deadline = time.time() + float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.bind(("0.0.0.0", port))
except OSError as e:
    print("${MARK} bind-failed", e.strerror, flush=True); sys.exit(0)
print("${MARK} listening", flush=True)
while want and time.time() < deadline:
    s.settimeout(max(0.05, deadline - time.time()))
    try:
        data, addr = s.recvfrom(2048)
    except socket.timeout:
        break
    token = data.decode("ascii", "replace")
    if token in want:
        want.discard(token); print("${MARK} got", token, addr[0], flush=True)
s.close()
print("${MARK} done", flush=True)
`;

// argv: address, port, token, repeats.
const PY_SENDER = `import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    for i in range(int(sys.argv[4])):
        s.sendto(sys.argv[3].encode("ascii"), (sys.argv[1], int(sys.argv[2]))); time.sleep(0.1)
except OSError as e:
    print("${MARK} send-failed", e.strerror, flush=True); sys.exit(0)
print("${MARK} sent", flush=True)
`;

export function linuxUdpListener(port: number, tokens: readonly string[], seconds: number): ProbeCommand {
  const args = [String(port), tokens.join(','), String(seconds)];
  return {
    script: shell`${need('python3')}exec python3 -c ${PY_LISTENER} ${args}\n`.text,
    command: `python3: bind UDP 0.0.0.0:${port}, wait ${seconds}s for ${tokens.length} tokens`,
  };
}

export function linuxUdpSender(address: string, port: number, token: string): ProbeCommand {
  const args = [address, String(port), token, String(UDP_REPEATS)];
  return {
    script: shell`${need('python3')}exec python3 -c ${PY_SENDER} ${args}\n`.text,
    command: `python3: send ${shellQuote(token)} to ${address}:${port}/udp x${UDP_REPEATS}`,
  };
}

export function windowsUdpListener(port: number, tokens: readonly string[], seconds: number): ProbeCommand {
  const rule = `kubemix-verify-udp-${port}`;
  const script = `${PS_HEAD}$want = New-Object 'System.Collections.Generic.HashSet[string]'
foreach ($token in ${psList(tokens)}) { [void]$want.Add($token) }
$rule = ${psQuote(rule)}
$added = $false
try {
  if ($null -eq (Get-NetFirewallRule -Name $rule -ErrorAction SilentlyContinue)) {
    New-NetFirewallRule -Name $rule -DisplayName 'kubemix verify: UDP probe, removed when it ends' -Direction Inbound -Protocol UDP -LocalPort ${port} -Action Allow | Out-Null
    $added = $true
  }
  try { $udp = New-Object System.Net.Sockets.UdpClient(${port}) } catch {
    Write-Output ('${MARK} bind-failed ' + $_.Exception.InnerException.Message)
    return
  }
  Write-Output '${MARK} listening'
  $deadline = [DateTime]::UtcNow.AddSeconds(${seconds})
  while ($want.Count -gt 0) {
    $left = [int]($deadline - [DateTime]::UtcNow).TotalMilliseconds
    if ($left -le 0) { break }
    $receive = $udp.ReceiveAsync()
    if (-not $receive.Wait($left)) { break }
    $token = [System.Text.Encoding]::ASCII.GetString($receive.Result.Buffer)
    if ($want.Remove($token)) { Write-Output ('${MARK} got ' + $token + ' ' + $receive.Result.RemoteEndPoint.Address) }
  }
  $udp.Close()
  Write-Output '${MARK} done'
} finally {
  if ($added) { Remove-NetFirewallRule -Name $rule }
}
`;
  return { script, command: `UdpClient(${port}): wait ${seconds}s for ${tokens.length} tokens` };
}

export function windowsUdpSender(address: string, port: number, token: string): ProbeCommand {
  const script = `${PS_HEAD}$udp = New-Object System.Net.Sockets.UdpClient
$bytes = [System.Text.Encoding]::ASCII.GetBytes(${psQuote(token)})
try {
  foreach ($i in 1..${UDP_REPEATS}) {
    [void]$udp.Send($bytes, $bytes.Length, ${psQuote(address)}, ${port})
    Start-Sleep -Milliseconds 100
  }
  Write-Output '${MARK} sent'
} catch {
  Write-Output ('${MARK} send-failed ' + $_.Exception.InnerException.Message)
} finally {
  $udp.Close()
}
`;
  return { script, command: `UdpClient.Send(${psQuote(token)}, ${address}:${port}) x${UDP_REPEATS}` };
}
