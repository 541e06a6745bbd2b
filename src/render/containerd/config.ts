// containerd's config.toml for the line in use (containerd docs/cri/config.md
// and RELEASES.md for the config versions): `version = 3` for 2.0–2.2,
// `version = 4` for 2.3 (it moved only server-level sections, which this file
// does not set, so the body is the same). CRI split into images and runtime
// plugins, the pause image pinned, CNI bin_dirs (2.1+), runc with the systemd
// cgroup driver kubelet uses, and hosts.toml directories for registries.
import { tomlString } from '../../util/escape/index.js';
import { IMAGES } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { CONTAINERD_PATHS as P } from './paths.js';

export function renderContainerdConfig(model: ClusterModel, node: PlanNode): RenderedArtifact {
  const version = Number(model.versions.containerdConfigVersion);
  if (version !== 3 && version !== 4)
    throw new Error(
      `containerd ${model.versions.containerd}: config version ${version} has no renderer (only the 2.x lines, versions 3 and 4, are supported)`,
    );
  const images = "plugins.'io.containerd.cri.v1.images'";
  const runtime = "plugins.'io.containerd.cri.v1.runtime'";
  const content = `# Rendered by kubemix for containerd ${model.versions.containerd}; re-plan instead of editing.
version = ${version}

[${images}.pinned_images]
  # kubelet >= 1.35 no longer takes --pod-infra-container-image: the sandbox image is set here.
  sandbox = ${tomlString(`${IMAGES.pause.repository}:${model.versions.pause}`)}

[${images}.registry]
  config_path = ${tomlString(P.certsDir)}

[${runtime}.cni]
  bin_dirs = [${tomlString(P.cniBin)}]
  conf_dir = ${tomlString(P.cniConf)}

[${runtime}.containerd]
  default_runtime_name = 'runc'

[${runtime}.containerd.runtimes.runc]
  runtime_type = 'io.containerd.runc.v2'

[${runtime}.containerd.runtimes.runc.options]
  BinaryName = ${tomlString(P.runc)}
  # kubelet's cgroupDriver is systemd (the kubeadm default): both must agree.
  SystemdCgroup = true
`;
  return { node: node.name, remotePath: P.config, mode: '0644', owner: 'root:root', content };
}

/** The systemd unit of the upstream release (it ships none in the tarball's bin/). */
export function renderContainerdUnit(node: PlanNode): RenderedArtifact {
  const content = `# Rendered by kubemix; re-plan instead of editing.
[Unit]
Description=containerd container runtime
Documentation=https://containerd.io
After=network.target local-fs.target dbus.service

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=${P.binary}
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
`;
  return { node: node.name, remotePath: P.unit, mode: '0644', owner: 'root:root', content };
}
