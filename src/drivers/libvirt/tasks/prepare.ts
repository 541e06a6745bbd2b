// task-prepare-hypervisors: libvirt and qemu installed and answering, the
// cluster's storage pool defined and running, and the guests' domain type
// decided: KVM only when a test guest really runs under it (on some hosts
// /dev/kvm exists and guests hang), else QEMU's software emulation with a
// warning, or a failure when the spec asks for kvm.
import { factsRef, sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverTask } from '../../types.js';
import { DEFINITION } from '../artifacts.js';
import { shell, shellCode, type ShellText } from '../../../util/escape/index.js';
import { definitionsDir } from '../layout.js';
import { KVM_PROBE, kvmProbe } from '../render/xml.js';
import { NOTHING, script, PREPARE, ref } from './common.js';
import { imageTasks } from './image.js';

/** The file on the hypervisor naming the domain type its guests get (`kvm` or `qemu`). */
export const DOMAIN_TYPE_FILE = 'domain-type';
/** How long the test guest has to print its firmware banner under KVM. */
export const KVM_PROBE_SECONDS = 20;

export function prepareTasks(model: DriverModel): DriverTask[] {
  return model.hypervisors.flatMap((hv) => [
    libvirtTask(model, hv),
    poolTask(model, hv),
    domainTypeTask(model, hv),
    ...imageTasks(model, hv),
  ]);
}

function libvirtTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  return {
    stage: PREPARE,
    host: hv.name,
    name: 'libvirt',
    description:
      'install libvirt, qemu and xorriso when missing (Debian, Ubuntu, CentOS Stream, Fedora); start the daemon',
    after: [factsRef(hv.name)],
    check: sh(script(model, hv, READY)),
    apply: sh(script(model, hv, shell`${INSTALL}${READY}`)),
    timeoutSeconds: 900,
  };
}

const READY =
  shellCode(`for c in virsh qemu-img xorriso curl; do command -v "$c" >/dev/null 2>&1 || { echo "$c missing"; exit 1; }; done
v uri >/dev/null || { echo "libvirt does not answer at $uri"; exit 1; }
`);

// Debian/Ubuntu: libvirt-daemon-system starts libvirtd; Fedora/CentOS Stream run the modular virtqemud.
const INSTALL = shellCode(`. /etc/os-release
case "$ID" in
  debian | ubuntu)
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q || fail "apt-get update failed"
    apt-get install -y -q --no-install-recommends libvirt-daemon-system libvirt-clients qemu-system-x86 \\
      qemu-utils ovmf xorriso curl || fail "could not install libvirt and qemu" ;;
  fedora | centos | rhel)
    dnf install -y libvirt-daemon-kvm libvirt-client qemu-img edk2-ovmf xorriso curl || fail "could not install libvirt and qemu" ;;
  *) fail "$ID is not a distribution kubemix installs libvirt on (Debian, Ubuntu, CentOS Stream, Fedora)" ;;
esac
if [ "$uri" = qemu:///system ]; then
  if systemctl cat virtqemud.socket >/dev/null 2>&1; then
    systemctl enable --now virtqemud.socket virtnetworkd.socket virtstoraged.socket || fail "cannot start virtqemud"
  else
    systemctl enable --now libvirtd || fail "cannot start libvirtd"
  fi
fi
`);

function poolTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  const active = shellCode(`[ "$(v pool-info --pool "$pool" 2>/dev/null | sed -n 's/^State: *//p')" = running ]`);
  return {
    stage: PREPARE,
    host: hv.name,
    name: 'pool',
    description: 'define, build and start the cluster storage pool; make the image cache',
    after: [ref(PREPARE, hv.name, 'libvirt')],
    check: sh(script(model, hv, shell`[ -d "$cache" ] && ${active}\n`)),
    apply: sh(
      script(
        model,
        hv,
        shell`mkdir -p "$cache" || fail "cannot make $cache"
v pool-info --pool "$pool" >/dev/null 2>&1 || v pool-define --file "$dir/${DEFINITION.pool}" >/dev/null || fail "cannot define pool $pool"
# A running pool is built already (libvirt refuses to build an active pool).
if ! ${active}; then
  v pool-build --pool "$pool" >/dev/null || fail "cannot build pool $pool at $pool_path"
  v pool-start --pool "$pool" >/dev/null || fail "cannot start pool $pool"
fi
v pool-autostart --pool "$pool" >/dev/null || fail "cannot mark pool $pool autostart"
`,
      ),
    ),
    uploads: [`${definitionsDir(model)}/${DEFINITION.pool}`],
    timeoutSeconds: 120,
  };
}

function domainTypeTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  const want = hv.domainType;
  const file = shell`"$dir/${DOMAIN_TYPE_FILE}"`;
  const check = want === 'auto' ? shell`[ -s ${file} ]` : shell`[ "$(cat ${file} 2>/dev/null)" = ${want} ]`;
  const decide =
    want === 'qemu'
      ? shellCode('type=qemu')
      : want === 'kvm'
        ? shell`probe_kvm || fail "${hv.name}: the spec asks for kvm, but a test guest does not run under KVM here: $why"
type=kvm`
        : shell`if probe_kvm; then type=kvm; else
  echo "WARNING: ${hv.name}: KVM does not work here ($why): guests run under QEMU software emulation, much slower" >&2
  type=qemu
fi`;
  return {
    stage: PREPARE,
    host: hv.name,
    name: 'domain-type',
    description:
      want === 'auto'
        ? 'probe KVM with a test guest; fall back to QEMU emulation with a warning'
        : `guests run as ${want}`,
    after: [ref(PREPARE, hv.name, 'libvirt')],
    check: sh(script(model, hv, shell`${check}\n`)),
    apply: sh(
      script(
        model,
        hv,
        shell`${want === 'qemu' ? NOTHING : probe(model)}${decide}
mkdir -p "$dir" && printf '%s\\n' "$type" > ${file}.tmp && mv ${file}.tmp ${file} || fail "cannot write $dir/${DOMAIN_TYPE_FILE}"
echo "guests on ${hv.name} run as $type"
`,
      ),
    ),
    uploads: want === 'qemu' ? [] : [`${definitionsDir(model)}/${KVM_PROBE.file}`],
    timeoutSeconds: KVM_PROBE_SECONDS + 60,
  };
}

// The test guest has no disk: its firmware (SeaBIOS) writes its banner to
// QEMU's debug console, which only happens when the vCPU really executes.
const probe = (model: DriverModel): ShellText => shell`probe_kvm() {
  why=""
  [ -c /dev/kvm ] || { why="no /dev/kvm"; return 1; }
  name=${kvmProbe(model).domain}
  log=${kvmProbe(model).log}
  rm -f "$log"
  v destroy --domain "$name" >/dev/null 2>&1
  if ! out=$(v create --file "$dir/${KVM_PROBE.file}" 2>&1); then why="the test guest did not start: $out"; return 1; fi
  i=0
  while :; do
    if grep -q SeaBIOS "$log" 2>/dev/null; then v destroy --domain "$name" >/dev/null 2>&1; rm -f "$log"; return 0; fi
    sleep 1; i=$((i + 1))
    [ "$i" -lt ${KVM_PROBE_SECONDS} ] || break
  done
  v destroy --domain "$name" >/dev/null 2>&1; rm -f "$log"
  why="the test guest printed nothing in ${KVM_PROBE_SECONDS} s"
  return 1
}
`;
