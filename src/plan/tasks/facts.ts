// task-gather-facts: record OS, version/build, kernel, CPUs, RAM and free disk
// of every host that exists before the run (hypervisors; existing nodes).
// The scripts print `key=value` lines; the executor stores them as facts.
import type { ClusterModel } from '../../model/resolve.js';
import { powershell, sh, task } from '../task.js';
import type { Task } from '../types.js';
import { shellCode } from '../../util/escape/index.js';

export const LINUX_FACTS = shellCode(`. /etc/os-release
printf 'os=%s\\nversion=%s\\n' "$ID" "\${VERSION_ID:-}"
printf 'kernel=%s\\n' "$(uname -r)"
printf 'cpus=%s\\n' "$(getconf _NPROCESSORS_ONLN)"
awk '/^MemTotal:/ { printf "ramMiB=%d\\n", $2 / 1024 }' /proc/meminfo
df -Pk / | awk 'NR == 2 { printf "diskFreeGiB=%d\\n", $4 / 1048576 }'
`);

export const WINDOWS_FACTS = `$os = Get-CimInstance -ClassName Win32_OperatingSystem
$cs = Get-CimInstance -ClassName Win32_ComputerSystem
"os=windows"
"version=$($os.Version)"
"kernel=$($os.BuildNumber)"
"cpus=$($cs.NumberOfLogicalProcessors)"
"ramMiB=$([int]($os.TotalVisibleMemorySize / 1024))"
"diskFreeGiB=$([int]((Get-PSDrive -Name C).Free / 1073741824))"
`;

export function factTasks(model: ClusterModel): Task[] {
  const existing = model.hosts.filter((h) => h.provisioner === 'user');
  return existing.map((host) =>
    task({
      stage: 'task-gather-facts',
      host: host.name,
      name: 'facts',
      description: 'record OS, version, kernel, CPUs, RAM and free disk',
      check: null,
      apply: host.shell === 'powershell' ? powershell(WINDOWS_FACTS) : sh(LINUX_FACTS, 'user'),
      timeoutSeconds: 60,
    }),
  );
}
