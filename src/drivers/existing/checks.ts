// task-run-validations on an existing host: it runs the OS the spec names,
// a control-plane node meets kubeadm's own preflight minimums, and a Windows
// host answers ICMPv4 echo from the node network.
import { linuxDistro, windowsRelease } from '../../matrix/index.js';
import { withDottedMask } from '../../net/cidr.js';
import { psList, psQuote, shell, type ShellText } from '../../util/escape/index.js';
import { factsRef, powershell, sh } from '../task.js';
import type { DriverModel, DriverNode, DriverTask, TaskRef } from '../types.js';

/** kubeadm's own preflight minimums for a control-plane node. */
export const CONTROL_PLANE_MINIMUM = { cpus: 2, ramMiB: 1700 } as const;

export const HOST_CHECK = 'os-and-size';

export function hostCheckRef(node: string): TaskRef {
  return { stage: 'task-run-validations', host: node, name: HOST_CHECK };
}

export function hostCheckTasks(model: DriverModel): DriverTask[] {
  return model.nodes.map((node) => ({
    stage: 'task-run-validations',
    host: node.name,
    name: HOST_CHECK,
    description: `check the host runs ${node.os}${node.role === 'control-plane' ? ' and meets kubeadm minimums' : ''}`,
    after: [factsRef(node.name)],
    check: null,
    apply:
      node.osFamily === 'windows'
        ? powershell(windowsCheck(node, model.cluster.network.nodeCidr))
        : sh(linuxCheck(node), 'user'),
    timeoutSeconds: 60,
  }));
}

/**
 * Every value goes through the `shell` template: those inside "…" are
 * escaped for double quotes ($ ` " \), so the text is the same as before
 * for the plain words the matrix and the spec's name pattern allow.
 */
function linuxCheck(node: DriverNode): ShellText {
  const distro = linuxDistro(node.os);
  const min = node.role === 'control-plane' ? CONTROL_PLANE_MINIMUM : { cpus: 1, ramMiB: 0 };
  const id = distro?.osRelease.id ?? '';
  const versionId = distro?.osRelease.versionId ?? '';
  return shell`. /etc/os-release
if [ "$ID" != "${id}" ] || [ "\${VERSION_ID:-}" != "${versionId}" ]; then
  echo "${node.name} runs $ID \${VERSION_ID:-}, the spec says ${node.os}" >&2; exit 1
fi
cpus=$(getconf _NPROCESSORS_ONLN)
ram=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
if [ "$cpus" -ge ${min.cpus} ] && [ "$ram" -ge ${min.ramMiB} ]; then :; else
  echo "${node.name} has $cpus CPUs and $ram MiB RAM; a ${node.role} node needs ${min.cpus} CPUs and ${min.ramMiB} MiB" >&2; exit 1
fi
`;
}

/** PowerShell: every value a single-quoted (verbatim) string through psQuote, joined to what the host reports with `+`. */
function windowsCheck(node: DriverNode, nodeCidr: string): string {
  const build = windowsRelease(node.os)?.build ?? '';
  return `$os = Get-CimInstance -ClassName Win32_OperatingSystem
if ($os.Version -ne ${psQuote(build)}) {
  throw (${psQuote(`${node.name} runs Windows build `)} + $os.Version + ${psQuote(`, the spec says ${node.os} (${build})`)})
}
${icmpEchoCheck(node, nodeCidr)}`;
}

/**
 * Windows Firewall drops inbound ICMPv4 echo unless a rule allows it (its own
 * "File and Printer Sharing (Echo Request - ICMPv4-In)" ships disabled), and
 * every node's validations ping this one before kubemix has opened anything:
 * an existing host must already allow echo from the node network
 * (docs/windows.md, "Existing Windows hosts"). Any enabled inbound allow rule
 * for ICMPv4 type 8 (or any type) from any address, the local subnet or the
 * node network passes; so does a host whose firewall profiles are all off.
 */
function icmpEchoCheck(node: DriverNode, nodeCidr: string): string {
  const masked = withDottedMask(nodeCidr);
  const from = ['Any', 'LocalSubnet', nodeCidr, ...(masked === undefined ? [] : [masked])];
  // Advice text inside a psQuote'd message: nodeCidr is a CIDR the spec boundary checked.
  const fix = `New-NetFirewallRule -Name 'kubemix-icmpv4-echo' -DisplayName 'kubemix: ICMPv4 echo request' -Direction Inbound -Protocol ICMPv4 -IcmpType 8 -RemoteAddress ${nodeCidr} -Action Allow`;
  return `$echo = @(Get-NetFirewallPortFilter -Protocol 'ICMPv4' -ErrorAction SilentlyContinue | Where-Object { @(@($_.IcmpType) | Where-Object { $_ -eq 'Any' -or $_ -eq '8' -or $_ -like '8:*' }).Count -gt 0 } | Get-NetFirewallRule | Where-Object { [string]$_.Enabled -eq 'True' -and [string]$_.Direction -eq 'Inbound' -and [string]$_.Action -eq 'Allow' -and @(@(($_ | Get-NetFirewallAddressFilter).RemoteAddress) | Where-Object { ${psList(from)} -contains $_ }).Count -gt 0 })
$firewallOn = @(Get-NetFirewallProfile | Where-Object { $_.Enabled }).Count -gt 0
if ($firewallOn -and $echo.Count -eq 0) {
  throw ${psQuote(`${node.name} drops ICMPv4 echo from the node network ${nodeCidr}: Windows Firewall allows it only with a rule, and every node's checks ping ${node.name}. Allow it (for example: ${fix}), then run kubemix up again.`)}
}
`;
}
