// The commands the underlay probes run on a node, per OS. Pure text. Every
// script ends with one `KUBEMIX-PROBE <word> …` line that judge.ts reads; a
// script that cannot run its tool says so on that line instead of failing
// with a shell error, so the report can name what is missing.
// Linux: iputils ping (-M do sets don't-fragment, iputils ping(8)), glibc
// getent, iproute2 `ip route get`, bash's /dev/tcp, python3 for UDP.
// Windows: .NET only (System.Net.NetworkInformation.Ping with
// PingOptions.DontFragment, TcpClient, UdpClient, Dns), no extra binaries.
// Linux scripts are built with the `shell` tagged template (every value
// escaped for where it lands); `command`, the line the report shows, quotes
// its values too, so it can be pasted.
import { psQuote, shell, shellCode, type ShellText } from '../../util/escape/index.js';

export const MARK = 'KUBEMIX-PROBE';

/** A script and the one line the report shows as "the command". */
export interface ProbeCommand {
  readonly script: string;
  readonly command: string;
}

const PS_HEAD = "$ErrorActionPreference = 'Stop'\n$ProgressPreference = 'SilentlyContinue'\n";

export function need(tool: string): ShellText {
  return shell`command -v ${tool} >/dev/null 2>&1 || { echo "${MARK} missing ${tool}"; exit 0; }\n`;
}

/** ICMP echo; with `size`, don't-fragment echoes of `size` payload bytes (node MTU less 28: IPv4 + ICMP headers). */
export function linuxPing(address: string, size?: number): ProbeCommand {
  // 'do' quoted: unquoted, the word reads like the keyword to linters (shellcheck SC1010), though sh takes it as
  // ping's argument either way.
  const df = size === undefined ? shellCode('') : shell` -M 'do' -s ${size}`;
  const ping = shell`ping -n -c 3 -i 0.2 -W 2${df} ${address}`;
  // The address in '…' (`shell` lets only a plain word in there, an IP address): the script stays byte for byte
  // what the plan's underlay validation tasks already hold (src/plan/tasks/underlay-validation.ts), so their
  // content, and a deployed cluster's journal of them, does not change.
  const script = shell`${need('ping')}if out=$(ping -n -c 3 -i 0.2 -W 2${df} '${address}' 2>&1); then res=ok; else res=fail; fi
printf '%s\\n' "$out" | tail -n 4
echo "${MARK} $res"
`;
  return { script: script.text, command: ping.text };
}

/**
 * After install, through the overlay itself: the target's VTEP found in the
 * source's own VXLAN tables (the forwarding entry whose `dst` is the target's
 * node IP gives its MAC, the neighbour with that MAC its VTEP address, both
 * written by the CNI: flannel's vxlan backend, `bridge fdb` and `ip neigh` of
 * flannel.<VNI>), then ICMP echoes to it, which travel as VXLAN in UDP between
 * the two nodes. `no-neighbour` when the CNI set up no entry for the target.
 */
export function linuxVxlanPing(device: string, address: string): ProbeCommand {
  const command = `ping -n -c 3 -i 0.2 -W 2 <VTEP of ${address} on ${device}>`;
  const dev = device;
  const script = shell`${need('ping')}${need('bridge')}mac=$(bridge fdb show dev ${dev} 2>/dev/null | awk -v ip=${address} '{ for (i = 1; i < NF; i++) if ($i == "dst" && $(i + 1) == ip) { print $1; exit } }')
[ -n "$mac" ] || { echo "${MARK} no-neighbour"; exit 0; }
vtep=$(ip -4 neigh show dev ${dev} | awk -v m="$mac" '$3 == m { print $1; exit }')
[ -n "$vtep" ] || { echo "${MARK} no-neighbour $mac"; exit 0; }
if out=$(ping -n -c 3 -i 0.2 -W 2 "$vtep" 2>&1); then res=ok; else res=fail; fi
printf '%s\n' "$out" | tail -n 4
echo "${MARK} $res $vtep"
`;
  return { script: script.text, command };
}

export function windowsPing(address: string, size?: number): ProbeCommand {
  const bytes = size ?? 32;
  const df = size === undefined ? '$false' : '$true';
  const command = `[Net.NetworkInformation.Ping]::Send(${psQuote(address)}, 2000, byte[${bytes}], DontFragment=${df}) x3`;
  const script = `${PS_HEAD}$ping = New-Object System.Net.NetworkInformation.Ping
$options = New-Object System.Net.NetworkInformation.PingOptions(64, ${df})
$ok = 0
$last = ''
foreach ($i in 1..3) {
  $reply = $ping.Send(${psQuote(address)}, 2000, (New-Object byte[] ${bytes}), $options)
  $last = [string]$reply.Status
  if ($reply.Status -eq 'Success') { $ok += 1 }
}
Write-Output "3 packets transmitted, $ok received, last status $last"
if ($ok -gt 0) { Write-Output '${MARK} ok' } elseif ($last -eq 'PacketTooBig') { Write-Output '${MARK} too-big' } else { Write-Output '${MARK} fail' }
`;
  return { script, command };
}

/** How many 5 s tries a TCP probe makes before it says nothing answered. */
export const TCP_TRIES = 3;

export function linuxTcp(address: string, port: number): ProbeCommand {
  // Inside bash -c '…' the address is read as bash code: `shell` lets only a safe word (an IP address) in there.
  const command = shell`bash -c 'exec 3<>/dev/tcp/${address}/${port}'`;
  // Up to TCP_TRIES tries of 5 s when no answer comes (a refusal is an answer): one try on a busy node is
  // weak evidence of a firewall (real-cluster tier run 29: one 5 s try from an emulated worker to HAProxy).
  const script = shell`${need('bash')}tries=0
while :; do
  tries=$((tries + 1))
  if out=$(timeout 5 ${command} 2>&1); then echo "${MARK} ok"; break; else rc=$?; fi
  [ $rc -eq 124 ] && [ $tries -lt ${TCP_TRIES} ] && continue
  printf '%s\\n' "$out"; case $rc in 124) echo "${MARK} timeout" ;; *) echo "${MARK} fail" ;; esac
  break
done
`;
  return { script: script.text, command: command.text };
}

export function windowsTcp(address: string, port: number): ProbeCommand {
  const command = `[Net.Sockets.TcpClient]::new().ConnectAsync(${psQuote(address)}, ${port}).Wait(5000)`;
  const script = `${PS_HEAD}$result = 'timeout'
foreach ($i in 1..${TCP_TRIES}) {
  $client = New-Object System.Net.Sockets.TcpClient
  try {
    if ($client.ConnectAsync(${psQuote(address)}, ${port}).Wait(5000)) { $result = 'ok' }
  } catch {
    Write-Output $_.Exception.InnerException.Message
    $result = 'fail'
  } finally {
    $client.Close()
  }
  if ($result -ne 'timeout') { break }
}
Write-Output "${MARK} $result"
`;
  return { script, command };
}

export function linuxDns(name: string): ProbeCommand {
  const command = shell`getent ahostsv4 ${name}`;
  const script = shell`${need('getent')}addrs=$(${command} | awk '{ print $1 }' | sort -u | tr '\\n' ' ')
echo "${MARK} addresses $addrs"
`;
  return { script: script.text, command: command.text };
}

export function windowsDns(name: string): ProbeCommand {
  const command = `[Net.Dns]::GetHostAddresses(${psQuote(name)})`;
  const script = `${PS_HEAD}try {
  $addrs = [System.Net.Dns]::GetHostAddresses(${psQuote(name)}) | Where-Object { $_.AddressFamily -eq 'InterNetwork' } | ForEach-Object { $_.IPAddressToString }
} catch {
  Write-Output $_.Exception.Message
  $addrs = @()
}
Write-Output ('${MARK} addresses ' + (($addrs | Sort-Object -Unique) -join ' '))
`;
  return { script, command };
}

export function linuxClock(): ProbeCommand {
  return { script: shell`echo "${MARK} clock $(date +%s%3N)"\n`.text, command: 'date +%s%3N' };
}

export function windowsClock(): ProbeCommand {
  return {
    script: `${PS_HEAD}Write-Output ('${MARK} clock ' + [DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds())\n`,
    command: '[DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds()',
  };
}

/** The route a node takes to `address`: `via GATEWAY` means a router hop. */
export function linuxRoute(address: string): ProbeCommand {
  const command = shell`ip route get ${address}`;
  // '…' as in linuxPing: the underlay validation task holds this script too.
  const script = shell`${need('ip')}echo "${MARK} route $(ip route get '${address}' 2>&1 | head -n 1)"\n`;
  return { script: script.text, command: command.text };
}

export function windowsRoute(address: string): ProbeCommand {
  const command = `Find-NetRoute -RemoteIPAddress ${psQuote(address)}`;
  const script = `${PS_HEAD}$route = Find-NetRoute -RemoteIPAddress ${psQuote(address)} | Where-Object { $null -ne $_.NextHop } | Select-Object -First 1
$to = ${psQuote(address)}
if ($route.NextHop -eq '0.0.0.0') { Write-Output ('${MARK} route ' + $to + ' dev ' + $route.InterfaceAlias) }
else { Write-Output ('${MARK} route ' + $to + ' via ' + $route.NextHop + ' dev ' + $route.InterfaceAlias) }
`;
  return { script, command };
}
