// containerd from the pinned upstream release on every distro (distro
// packages are too old: Debian 12 ships 1.6, Debian 13 and Ubuntu 24.04 ship
// 1.7, which Kubernetes 1.36 no longer supports), with runc and the CNI plugins,
// each sha256-verified; then its config, unit and registry hosts.
import { linuxDistro } from '../../matrix/index.js';
import { downloadCache } from '../../model/downloads.js';
import type { ClusterModel } from '../../model/resolve.js';
import { renderContainerdConfig, renderContainerdUnit } from '../../render/containerd/config.js';
import { renderCrictlConfig } from '../../render/containerd/crictl.js';
import { proxyExports, renderContainerdProxy } from '../../render/linux/proxy.js';
import { registryCaPath, renderRegistryHosts, servicesRegistry } from '../../render/containerd/hosts.js';
import { CONTAINERD_PATHS as P } from '../../render/containerd/paths.js';
import { sh, task, taskId } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import { secretRef } from '../../model/secret-names.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import type { Task } from '../types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { configTask } from './config-files.js';
import { nodeDownloadScript } from './download.js';
import { PREP_STAGE, linuxNodes } from './linux-prep.js';
import { SECRET } from './registry-scripts.js';

export function containerdContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const tasks: Task[] = [];
  const artifacts: RenderedArtifact[] = [];
  for (const node of linuxNodes(model)) {
    const files = [
      renderContainerdConfig(model, node),
      renderContainerdUnit(node),
      ...renderContainerdProxy(model, node),
      ...renderRegistryHosts(model, node),
      renderCrictlConfig(node),
    ];
    artifacts.push(...files);
    const installs = binaryTasks(model, node);
    const ca = registryCaTask(model, node);
    tasks.push(...installs, ...(ca === undefined ? [] : [ca]));
    tasks.push(
      configTask({
        stage: PREP_STAGE,
        host: node.name,
        name: 'containerd',
        description: `containerd ${model.versions.containerd} with the systemd cgroup driver and pause ${model.versions.pause}`,
        files,
        // The installed 2.x binary parses the config itself: unknown sections or a wrong version fail here.
        validate: shell`systemctl daemon-reload\n${P.binary} --config ${P.config} config dump >/dev/null`,
        service: 'containerd',
        after: [
          ...installs.map((t) => t.id),
          ...(ca === undefined ? [] : [ca.id]),
          taskId(PREP_STAGE, node.name, 'kernel-modules'),
        ],
      }),
    );
  }
  return { tasks, artifacts };
}

function binaryTasks(model: ClusterModel, node: PlanNode): Task[] {
  const v = model.versions;
  const tools = toolsTask(node, proxyExports(model));
  const cached = downloadCache(model) !== undefined;
  const fetch = (name: string, description: string, check: ShellText, id: string, install: ShellText): Task =>
    task({
      stage: PREP_STAGE,
      host: node.name,
      name,
      description,
      after: [tools.id],
      check: sh(check),
      // From the services node's cache no proxy applies; from the source the spec's proxy does.
      apply: sh(shell`${cached ? shellCode('') : proxyExports(model)}${nodeDownloadScript(model, id, install)}`),
      ...(cached ? { secrets: [SECRET.caCert] } : {}),
      timeoutSeconds: 600,
    });
  return [
    tools,
    fetch(
      'containerd-binaries',
      `containerd ${v.containerd} from the upstream release`,
      shell`${P.binary} --version 2>/dev/null | grep -q ' v${v.containerd} '`,
      'linux/containerd.tar.gz',
      shellCode('tar -C /usr/local -xzf "$file" bin/'),
    ),
    fetch(
      'runc',
      `runc ${v.runc}`,
      shell`${P.runc} --version 2>/dev/null | grep -q '^runc version ${v.runc}$'`,
      'linux/runc',
      shell`install -D -m 0755 "$file" ${P.runc}`,
    ),
    // The plugins have no --version of their own: a marker records what was unpacked.
    fetch(
      'cni-plugins',
      `CNI plugins ${v.cniPlugins} in ${P.cniBin}`,
      shell`[ -x ${P.cniBin}/bridge ] && [ "$(cat ${P.cniBin}/.kubemix-version 2>/dev/null)" = ${v.cniPlugins} ]`,
      'linux/cni-plugins.tgz',
      shell`install -d -m 0755 ${P.cniBin}\ntar -C ${P.cniBin} -xzf "$file"\necho ${v.cniPlugins} > ${P.cniBin}/.kubemix-version`,
    ),
  ];
}

/** curl, tar, gpg and CA roots: what downloads and package repositories need. */
function toolsTask(node: PlanNode, proxy: ShellText): Task {
  const apt = linuxDistro(node.os)?.family !== 'dnf';
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'download-tools',
    description: 'curl, tar, gpg and CA certificates',
    check: sh(
      shellCode(
        'command -v curl >/dev/null && command -v tar >/dev/null && command -v gpg >/dev/null && { [ -s /etc/ssl/certs/ca-certificates.crt ] || [ -s /etc/pki/tls/certs/ca-bundle.crt ]; }',
      ),
    ),
    apply: sh(
      shell`${proxy}${
        apt
          ? shellCode(
              'set -eu\nexport DEBIAN_FRONTEND=noninteractive\napt-get update -q\napt-get install -y -q --no-install-recommends ca-certificates curl gpg tar',
            )
          : shellCode('dnf install -y -q ca-certificates curl gnupg2 tar')
      }`,
    ),
    timeoutSeconds: 600,
  });
}

/** The cluster CA beside the services registry's hosts.toml, so pulls from it verify. */
function registryCaTask(model: ClusterModel, node: PlanNode): Task | undefined {
  const registry = servicesRegistry(model);
  if (registry === undefined) return undefined;
  const path = registryCaPath(registry);
  const ca = secretRef(SECRET.caCert);
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'registry-ca',
    description: `trust the cluster CA for ${registry}`,
    check: sh(shell`cmp -s ${path} - <<'KUBEMIX_EOF'\n${ca}\nKUBEMIX_EOF`),
    apply: sh(
      shell`set -eu\ninstall -d -m 0755 ${path.slice(0, path.lastIndexOf('/'))}\ncat > ${path} <<'KUBEMIX_EOF'\n${ca}\nKUBEMIX_EOF\nchmod 0644 ${path}`,
    ),
    secrets: [SECRET.caCert],
    timeoutSeconds: 30,
  });
}
