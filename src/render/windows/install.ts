// Steps 4–6 of a Windows worker: containerd, the binaries, and the kubelet
// service registered before the join (kubeadm stops and starts a service of
// exactly that name and gives up after ~10 s each way).
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { sha256Hex } from '../../util/json.js';
import { containerdConfig } from './containerd.js';
import { download, downloadFunction, downloadsFor, fetchCall, proxyOf } from './downloads.js';
import { kubeletCommandLine } from './kubeadm.js';
import { WIN } from './paths.js';
import { SERVICE_FUNCTIONS, q, qList } from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

const CONTAINERD_EXE = `${WIN.containerdDir}\\containerd.exe`;

/** Environment for containerd's image pulls through the spec's proxy. */
function proxyEnvironment(model: ClusterModel): string[] {
  const proxy = proxyOf(model);
  if (proxy === '') return [];
  const noProxy = [
    ...(model.proxy?.noProxy ?? []),
    'localhost',
    '127.0.0.1',
    model.cluster.network.nodeCidr,
    ...model.podNetworks.all,
    ...model.serviceNetworks.all,
    `.${model.cluster.domain}`,
  ];
  return [`HTTP_PROXY=${model.proxy?.http ?? proxy}`, `HTTPS_PROXY=${proxy}`, `NO_PROXY=${noProxy.join(',')}`];
}

export function containerd(model: ClusterModel, node: PlanNode): WindowsScripts {
  const d = download(model, 'containerd.tar.gz');
  const configHash = sha256Hex(containerdConfig(model, node)).toUpperCase();
  const env = proxyEnvironment(model);
  const apply = `${downloadFunction(model)}${SERVICE_FUNCTIONS}${fetchCall(model, d, 'archive')}
New-Item -ItemType Directory -Force -Path ${qList([WIN.containerdDir, WIN.containerdCerts, `${WIN.logs}\\containerd`])} | Out-Null
$unpack = Join-Path $env:TEMP 'kubemix-containerd'
if (Test-Path -LiteralPath $unpack) { Remove-Item -Recurse -Force -LiteralPath $unpack }
New-Item -ItemType Directory -Force -Path $unpack | Out-Null
& tar.exe -xzf $archive -C $unpack
if ($LASTEXITCODE -ne 0) { throw "tar.exe could not unpack $archive" }
Stop-KubemixService -Name 'containerd'
Copy-Item -Force -Path (Join-Path $unpack 'bin\\*') -Destination ${q(WIN.containerdDir)}
if ($null -eq (Get-Service -Name 'containerd' -ErrorAction SilentlyContinue)) {
  & ${q(CONTAINERD_EXE)} --register-service --config ${q(WIN.containerdConfig)} --log-file ${q(`${WIN.logs}\\containerd\\containerd.log`)}
  if ($LASTEXITCODE -ne 0) { throw "containerd --register-service exited $LASTEXITCODE" }
}
${env.length === 0 ? '' : `Set-KubemixServiceEnvironment -Name 'containerd' -Values ${qList(env)}\n`}Set-KubemixRestart -Name 'containerd' -Enabled $true
Set-Service -Name 'containerd' -StartupType Automatic
Start-Service -Name 'containerd'
`;
  const check = checkThat(
    `(Get-Service -Name 'containerd' -ErrorAction SilentlyContinue).Status -eq 'Running' -and (& ${q(CONTAINERD_EXE)} --version) -match ${q(` v${d.version} `)} -and (Get-FileHash -Algorithm SHA256 -LiteralPath ${q(WIN.containerdConfig)}).Hash -eq ${q(configHash)}`,
  );
  return { check, apply };
}

/** Unpack an archive into a fresh folder under TEMP; `$<variable>` holds the folder. */
function unpack(archiveVar: string, variable: string, zip: boolean): string {
  const extract = zip
    ? `Expand-Archive -LiteralPath $${archiveVar} -DestinationPath $${variable} -Force`
    : `& tar.exe -xzf $${archiveVar} -C $${variable}\nif ($LASTEXITCODE -ne 0) { throw "tar.exe could not unpack $${archiveVar}" }`;
  return `$${variable} = Join-Path $env:TEMP ${q(`kubemix-${variable}`)}
if (Test-Path -LiteralPath $${variable}) { Remove-Item -Recurse -Force -LiteralPath $${variable} }
New-Item -ItemType Directory -Force -Path $${variable} | Out-Null
${extract}`;
}

/** Copy `file` found anywhere under `$<dir>` to `dest`. */
function pick(dir: string, file: string, dest: string): string {
  return `$found = Get-ChildItem -LiteralPath $${dir} -Recurse -File -Filter ${q(file)} | Select-Object -First 1
if ($null -eq $found) { throw ${q(`${file} is missing from its release archive`)} }
Copy-Item -Force -LiteralPath $found.FullName -Destination ${q(dest)}`;
}

/** What the HostProcess pods run from the spec's images instead (fromImages). */
const FROM_IMAGES = ['kube-proxy.exe', 'flanneld.exe'];

/**
 * Copy a verified download to `dest`. A binary a HostProcess pod is running is
 * locked, but may be renamed: it is moved aside first (an upgrade replaces
 * kube-proxy.exe under its pod), and copies moved aside earlier are deleted
 * once nothing runs them.
 */
export const INSTALL_FUNCTION = `function Install-KubemixBinary([string]$From, [string]$To) {
  foreach ($old in @(Get-ChildItem -Path ($To + '.old-*') -File -ErrorAction SilentlyContinue)) {
    Remove-Item -Force -LiteralPath $old.FullName -ErrorAction SilentlyContinue
  }
  if (Test-Path -LiteralPath $To) {
    if ((Get-FileHash -Algorithm SHA256 -LiteralPath $To).Hash -eq (Get-FileHash -Algorithm SHA256 -LiteralPath $From).Hash) { return }
    Move-Item -Force -LiteralPath $To -Destination ($To + '.old-' + (Get-Date -Format 'yyyyMMddHHmmss'))
  }
  Copy-Item -Force -LiteralPath $From -Destination $To
}
`;

/** Downloads only flannel's Windows side uses: with Calico, calico-node-windows brings calico.exe itself. */
const FLANNEL_ONLY = ['flanneld.exe', 'cni-plugins.tgz', 'flannel-cni-plugin.tgz', 'windows-container-networking.zip'];

/** flannel's CNI plugins: host-local (the source VIP), flannel.exe and its sdnoverlay/sdnbridge delegates. */
function flannelCniPlugins(model: ClusterModel): string {
  return `${fetchCall(model, download(model, 'cni-plugins.tgz'), 'archive')}
${unpack('archive', 'cniPlugins', false)}
${pick('cniPlugins', 'host-local.exe', `${WIN.cniBin}\\host-local.exe`)}
${fetchCall(model, download(model, 'flannel-cni-plugin.tgz'), 'archive')}
${unpack('archive', 'flannelCni', false)}
# The release ships flannel-amd64.exe; the CNI config's type: flannel needs flannel.exe.
${pick('flannelCni', 'flannel-amd64.exe', `${WIN.cniBin}\\flannel.exe`)}
${fetchCall(model, download(model, 'windows-container-networking.zip'), 'archive')}
${unpack('archive', 'sdn', true)}
${pick('sdn', 'sdnoverlay.exe', `${WIN.cniBin}\\sdnoverlay.exe`)}
${pick('sdn', 'sdnbridge.exe', `${WIN.cniBin}\\sdnbridge.exe`)}
`;
}

export function binaries(model: ClusterModel): WindowsScripts {
  const marker = `${WIN.kubemix}\\binaries.json`;
  const calico = model.overlay.plugin === 'calico';
  const fromImages = model.windowsHostProcess?.fromImages === true;
  const wanted = downloadsFor(model).filter(
    (d) =>
      d.name !== 'containerd.tar.gz' &&
      !(fromImages && FROM_IMAGES.includes(d.name)) &&
      !(calico && FLANNEL_ONLY.includes(d.name)),
  );
  const stamp = JSON.stringify(wanted.map((d) => `${d.name}@${d.version}`));
  const exes = ['kubelet', 'kubeadm', ...(fromImages ? [] : ['kube-proxy']), 'kube-log-runner'].map((n) => `${n}.exe`);
  if (!calico && !fromImages) exes.push('flanneld.exe');
  const apply = `${downloadFunction(model)}${INSTALL_FUNCTION}New-Item -ItemType Directory -Force -Path ${qList([WIN.bin, WIN.cniBin, WIN.kubemix])} | Out-Null
${exes.map((n) => `${fetchCall(model, download(model, n), 'file')}\nInstall-KubemixBinary -From $file -To ${q(`${WIN.bin}\\${n}`)}`).join('\n')}
${calico ? '' : flannelCniPlugins(model)}Set-Content -LiteralPath ${q(marker)} -Value ${q(stamp)} -NoNewline
`;
  const check = checkThat(
    `(Test-Path -LiteralPath ${q(marker)}) -and (Get-Content -Raw -LiteralPath ${q(marker)}) -eq ${q(stamp)}`,
  );
  return { check, apply };
}

export function kubeletService(node: PlanNode): WindowsScripts {
  const cmd = kubeletCommandLine(node);
  const apply = `${SERVICE_FUNCTIONS}New-Item -ItemType Directory -Force -Path ${qList([WIN.pki, WIN.kubeletDir, `${WIN.logs}\\kubelet`, WIN.patchesDir])} | Out-Null
New-Item -ItemType Directory -Force -Path ${q(`${WIN.kubeletDir}\\etc\\kubernetes`)} | Out-Null
# The kubelet looks for the CA under its own root-relative path on Windows.
if (-not (Test-Path -LiteralPath ${q(WIN.kubeletPkiLink)})) {
  New-Item -ItemType SymbolicLink -Path ${q(WIN.kubeletPkiLink)} -Target ${q(WIN.pki)} | Out-Null
}
$binPath = ${q(cmd)}
if ($null -eq (Get-Service -Name 'kubelet' -ErrorAction SilentlyContinue)) {
  New-Service -Name 'kubelet' -BinaryPathName $binPath -DisplayName 'kubelet' -StartupType Automatic -DependsOn 'containerd' | Out-Null
} else {
  & sc.exe config kubelet binPath= $binPath start= auto depend= containerd | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe config kubelet exited $LASTEXITCODE" }
}
# kubeadm stops and starts the kubelet itself during the join: a restart-on-failure would race it.
Set-KubemixRestart -Name 'kubelet' -Enabled $false
`;
  const check = checkThat(
    `(Test-Path -LiteralPath ${q(WIN.kubeletPkiLink)}) -and (Get-CimInstance -ClassName Win32_Service -Filter "Name='kubelet'").PathName -eq ${q(cmd)}`,
  );
  return { check, apply };
}
