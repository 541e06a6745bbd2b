// task-create-network: the cluster network, then per guest its disk
// (overlay on the cached base image), its first-boot media, its domain,
// started; then a wait until the guest's SSH answers with the host key the
// deployer pinned. The services node's guest comes first (the others
// resolve through it). Every step checks before it acts, so a resumed run
// never recreates a guest that already answers.
import { shell, shellCode, type ShellText } from '../../../util/escape/index.js';
import { INSTALL_MEDIA_FILES } from '../../install-media.js';
import {
  CLUSTER_SSH_PUBLIC_KEY,
  sshHostKeyBase64Secret,
  sshHostKeySecret,
  sshHostPublicKeySecret,
  WINDOWS_ADMIN_PASSWORD,
} from '../../secret-names.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverNode, DriverTask, TaskRef } from '../../types.js';
import { DEFINITION, guestsOf } from '../artifacts.js';
import { baseImagePath, definitionsDir, installIsoPath, VIRTIO_WIN_ISO } from '../layout.js';
import { domainName, VOLUME_SUFFIXES } from '../names.js';
import { gatewayHypervisor, hasOverlay, isGateway } from '../render/overlay.js';
import { OVERLAY_TASK, overlayTask } from './overlay.js';
import { CIDR_TASK, cidrTask } from './cidr.js';
import { imageNames, imageRef } from './image.js';
import { NOTHING, script, NETWORK, PREPARE, ref } from './common.js';
import { DOMAIN_TYPE_FILE } from './prepare.js';
import { ejectRef, ejectTask, SETUP_FINISHED, setupRef, setupTask } from './windows-guest.js';

/**
 * Bounds of the wait for a guest's SSH: Linux boots in minutes from its
 * cloud image; Windows after its Setup (bounded on its own,
 * SETUP_WAIT_SECONDS) boots from its disk for the first time.
 */
export const SSH_WAIT_SECONDS = { linux: 900, windows: 900 } as const;

export function networkTasks(model: DriverModel): DriverTask[] {
  return model.hypervisors.flatMap((hv) => [
    cidrTask(model, hv),
    networkTask(model, hv),
    ...(hasOverlay(model) ? [overlayTask(model, hv)] : []),
    ...guestsOf(model, hv.name).flatMap((n) =>
      n.osFamily === 'linux'
        ? [guestTask(model, hv, n), sshTask(model, hv, n)]
        : [
            guestTask(model, hv, n),
            setupTask(model, hv, n),
            sshTask(model, hv, n),
            ejectTask(model, hv, n, sshRef(n, model)),
          ],
    ),
  ]);
}

/**
 * Where a guest is reached from: its hypervisor, or across several the
 * gateway hypervisor, the only one with an address on the node network.
 */
export function reachedFrom(model: Pick<DriverModel, 'hypervisors'>, node: DriverNode): string {
  return hasOverlay(model) ? gatewayHypervisor(model).name : (node.hypervisor ?? '');
}

function sshRef(node: DriverNode, model: Pick<DriverModel, 'hypervisors'>): TaskRef {
  return ref(NETWORK, reachedFrom(model, node), `ssh-${node.name}`);
}

/** The task after which a node's own tasks may reach it: its SSH answers (and a Windows guest's media are gone). */
export function guestReadyRef(node: DriverNode, model: Pick<DriverModel, 'hypervisors'>): TaskRef {
  return node.osFamily === 'windows' ? ejectRef(node) : sshRef(node, model);
}

function networkTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  const active = shellCode(`v net-info --network "$net" 2>/dev/null | grep -q '^Active: *yes'`);
  return {
    stage: NETWORK,
    host: hv.name,
    name: 'network',
    description: `define and start ${model.cluster.network.nodeCidr} with NAT and a DHCP reservation per guest`,
    after: [
      ref(PREPARE, hv.name, 'libvirt'),
      ref(NETWORK, hv.name, CIDR_TASK),
      ...(hasOverlay(model) && !isGateway(model, hv) ? [ref(NETWORK, hv.name, OVERLAY_TASK)] : []),
      { stage: 'task-run-validations', host: hv.name, name: 'capacity' },
    ],
    check: sh(script(model, hv, shell`${active}\n`)),
    apply: sh(
      script(
        model,
        hv,
        shell`v net-info --network "$net" >/dev/null 2>&1 || v net-define --file "$dir/${DEFINITION.network}" >/dev/null || fail "cannot define network $net"
${active} || v net-start --network "$net" >/dev/null || fail "cannot start network $net"
v net-autostart --network "$net" >/dev/null || fail "cannot mark network $net autostart"
`,
      ),
    ),
    uploads: [`${definitionsDir(model)}/${DEFINITION.network}`],
    timeoutSeconds: 120,
  };
}

function guestTask(model: DriverModel, hv: DriverHypervisor, node: DriverNode): DriverTask {
  const services = model.nodes.find((n) => n.role === 'services');
  const first = services !== undefined && services.name !== node.name && services.hypervisor !== undefined;
  const linux = node.osFamily === 'linux';
  const defs = definitionsDir(model);
  const media = `${domainName(node)}${linux ? VOLUME_SUFFIXES.cloudInit : VOLUME_SUFFIXES.unattend}`;
  const name = shell`d=${domainName(node)}\n`;
  const vars = shell`${name}g="$dir/$d"
disk=${`${domainName(node)}${VOLUME_SUFFIXES.disk}`}
media=${media}
${linux ? shell`base=${baseImagePath(node.os)}\n` : shell`iso=${installIsoPath(node.os)}\nvirtio=${VIRTIO_WIN_ISO}\n`}`;
  return {
    stage: NETWORK,
    host: hv.name,
    name: `guest-${node.name}`,
    description: linux
      ? `create ${node.name}'s disk, cloud-init seed and domain, and start it`
      : `create ${node.name}'s empty disk, its unattend media (ISO) and its domain booting the install ISO, and start it`,
    after: [
      ref(NETWORK, hv.name, 'network'),
      ...(hasOverlay(model) ? [ref(NETWORK, hv.name, OVERLAY_TASK)] : []),
      ref(PREPARE, hv.name, 'pool'),
      ref(PREPARE, hv.name, 'domain-type'),
      ...(first ? [guestReadyRef(services, model)] : []),
      ...imageNames(node).map((i) => imageRef(hv.name, i)),
    ],
    check: sh(
      script(
        model,
        hv,
        linux ? shell`${name}${RUNNING}\n` : shell`${name}g="$dir/$d"\n${DEFINED} && { ${WINDOWS_UP}; }\n`,
      ),
    ),
    apply: sh(
      script(
        model,
        hv,
        linux
          ? shell`${vars}${LINUX_DISK}${MEDIA(true, NOTHING)}${START}`
          : shell`${vars}${WINDOWS_DISK}${WINDOWS_MEDIA}${WINDOWS_START}`,
      ),
    ),
    uploads: [
      `${defs}/${DEFINITION.volume(node)}`,
      ...(hv.domainType === 'auto' ? (['kvm', 'qemu'] as const) : [hv.domainType]).map(
        (t) => `${defs}/${DEFINITION.domain(node, t)}`,
      ),
      ...(linux
        ? ['meta-data', 'user-data', 'network-config'].map((f) => `${defs}/${DEFINITION.seed(node, f)}`)
        : Object.values(INSTALL_MEDIA_FILES).map((f) => `${defs}/${DEFINITION.media(node)}/${f}`)),
    ],
    ...(linux
      ? { secrets: [CLUSTER_SSH_PUBLIC_KEY, sshHostKeyBase64Secret(node.name)] }
      : {
          secrets: [CLUSTER_SSH_PUBLIC_KEY, sshHostKeySecret(node.name), WINDOWS_ADMIN_PASSWORD],
          uploadsOnApply: true,
        }),
    timeoutSeconds: 600,
  };
}

const RUNNING = shellCode(`v domstate --domain "$d" 2>/dev/null | grep -qx running`);
const DEFINED = shellCode(`v dominfo --domain "$d" >/dev/null 2>&1`);
const TYPE = shell`type=$(cat "$dir/${DOMAIN_TYPE_FILE}") || fail "no domain type decided for this hypervisor"\n`;
const START = shell`${TYPE}${DEFINED} || v define --file "$g/domain-$type.xml" >/dev/null || fail "cannot define domain $d"
${RUNNING} || v start --domain "$d" >/dev/null || fail "cannot start domain $d"
echo "started $d ($type)"
`;
// A Windows guest is up once started: Setup powers it off when it is done,
// and the setup task (tasks/windows-guest.ts), not this one, starts it again.
const WINDOWS_UP = shell`${RUNNING} || [ -f "$g/${SETUP_FINISHED}" ] || v domstate --reason --domain "$d" 2>/dev/null | grep -qx 'shut off (shutdown)'`;

// The base cloud image is fetched once per hypervisor into the cache (tasks/image.ts); the disk overlays it.
const LINUX_DISK =
  shellCode(`[ -f "$base" ] || fail "no base image $base: its image task has not run on this hypervisor"
v vol-info --pool "$pool" --vol "$disk" >/dev/null 2>&1 || v vol-create --pool "$pool" --file "$g/volume.xml" >/dev/null || fail "cannot create volume $disk"
`);
const WINDOWS_DISK =
  shellCode(`for f in "$iso" "$virtio"; do [ -f "$f" ] || fail "no install ISO $f: its image task has not run on this hypervisor"; done
v vol-info --pool "$pool" --vol "$disk" >/dev/null 2>&1 || v vol-create --pool "$pool" --file "$g/volume.xml" >/dev/null || fail "cannot create volume $disk"
`);

// The media volume is an ISO9660 image made from the uploaded files, volume label
// cidata (cloud-init's NoCloud) or the unattend media's files (Windows Setup reads any drive).
// `i` indents every line (the Windows guest's block sits inside an `if`).
const MEDIA = (
  linux: boolean,
  i: ShellText,
): ShellText => shell`${i}if ! v vol-info --pool "$pool" --vol "$media" >/dev/null 2>&1; then
${i}  src="$g/${linux ? 'seed' : 'unattend'}"
${i}  [ -d "$src" ] || fail "no first-boot media files in $src"
${i}  command -v xorriso >/dev/null 2>&1 || fail "xorriso missing: install it on this hypervisor"
${i}  tmp=$(mktemp -d) || fail "no temporary directory"
${i}  xorriso -as mkisofs -quiet -volid ${linux ? 'cidata' : 'KUBEMIX'} -joliet -rock -output "$tmp/media.iso" "$src" || { rm -rf "$tmp"; fail "cannot build $media"; }
${i}  size=$(stat -c %s "$tmp/media.iso")
${i}  v vol-create-as --pool "$pool" --name "$media" --capacity "$size" --format raw >/dev/null &&
${i}    v vol-upload --pool "$pool" --vol "$media" --file "$tmp/media.iso" || { rm -rf "$tmp"; fail "cannot upload $media"; }
${i}  rm -rf "$tmp"
${i}fi
`;

// The unattend files hold secrets: they are uploaded only when this task
// applies, and deleted when it ends, whatever happens. The media are built
// only for a guest not yet defined: a guest that exists has installed from
// them (or is installing), and once ejected they must not come back.
const WINDOWS_MEDIA = shell`trap 'rm -rf -- "$g/unattend"' EXIT
if ! v dominfo --domain "$d" >/dev/null 2>&1; then
${MEDIA(false, shellCode('  '))}fi
`;

// The install ISO's UEFI loader asks "Press any key to boot from CD or DVD"
// for a few seconds and falls through to the next boot device when nobody
// does (Microsoft's efisys.bin; only efisys_noprompt.bin does not ask): on
// the first start, press Enter every 2 s for a minute.
const PRESS_ANY_KEY = shellCode(`if [ -n "$new" ]; then
  for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
    v send-key --domain "$d" KEY_ENTER >/dev/null 2>&1 || true
    sleep 2
  done
fi
`);
const WINDOWS_START = shell`${TYPE}new=
${DEFINED} || { v define --file "$g/domain-$type.xml" >/dev/null && new=1; } || fail "cannot define domain $d"
{ ${WINDOWS_UP}; } || v start --domain "$d" >/dev/null || fail "cannot start domain $d"
${PRESS_ANY_KEY}echo "started $d ($type)"
`;

function sshTask(model: DriverModel, hv: DriverHypervisor, node: DriverNode): DriverTask {
  const limit = SSH_WAIT_SECONDS[node.osFamily];
  const from = model.hypervisors.find((h) => h.name === reachedFrom(model, node)) ?? hv;
  const vars = shell`ip=${node.ip}
want=${`{{secret:${sshHostPublicKeySecret(node.name)}}}`}
`;
  // The key the guest offers must be the one we generated: ssh-keyscan output's
  // key field compared with the pinned public key's.
  const answers = (
    i: ShellText,
  ): ShellText => shell`offered=$(ssh-keyscan -T 5 -t ed25519 "$ip" 2>/dev/null | awk '{ print $3 }')
${i}[ -n "$offered" ] && [ "$offered" = "$(printf '%s\\n' "$want" | awk '{ print $2 }')" ]`;
  return {
    stage: NETWORK,
    host: reachedFrom(model, node),
    name: `ssh-${node.name}`,
    description: `wait up to ${limit / 60} min until ${node.name} (${node.ip}) answers SSH with its pinned host key`,
    after: [node.osFamily === 'windows' ? setupRef(node) : ref(NETWORK, hv.name, `guest-${node.name}`)],
    check: sh(script(model, from, shell`${vars}${answers(NOTHING)}\n`)),
    apply: sh(
      script(
        model,
        from,
        shell`${vars}command -v ssh-keyscan >/dev/null 2>&1 || fail "ssh-keyscan missing (openssh-client)"
end=$(($(date +%s) + ${limit}))
until ${answers(shellCode('  '))}; do
  [ "$(date +%s)" -lt "$end" ] || fail "${node.name} did not answer SSH at $ip with its pinned host key within ${limit} s"
  echo "waiting for ${node.name} ($ip)"
  sleep 10
done
echo "${node.name} answers with its pinned host key"
`,
      ),
    ),
    secrets: [sshHostPublicKeySecret(node.name)],
    timeoutSeconds: limit + 60,
  };
}
