// A Windows guest's install, after its domain started (tasks/network.ts):
// wait until Windows Setup has finished — the first-boot script Setup runs
// last powers the guest off (render/windows/unattend-setup.ts) — and start
// it again; then, once it answers SSH with its pinned host key, eject and
// delete its unattend media, which hold the Administrator password and the
// SSH host key. The eject runs after that answer and never before, also on
// a resumed run (its check finds the media still there). Bounded waits that
// print their progress: Setup takes long.
import { shell, shellCode, type ShellText } from '../../../util/escape/index.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverNode, DriverTask, TaskRef } from '../../types.js';
import { domainName, VOLUME_SUFFIXES } from '../names.js';
import { MEDIA_TARGET } from '../render/xml.js';
import { NOTHING, script, NETWORK, ref } from './common.js';

/** Windows Setup, from the first boot off the install ISO until it powers the guest off. */
export const SETUP_WAIT_SECONDS = 5400;
/** The file beside a guest's definitions that says its Setup finished (no secret). */
export const SETUP_FINISHED = 'setup-finished';

export function setupRef(node: DriverNode): TaskRef {
  return ref(NETWORK, node.hypervisor ?? '', `setup-${node.name}`);
}

export function ejectRef(node: DriverNode): TaskRef {
  return ref(NETWORK, node.hypervisor ?? '', `eject-${node.name}`);
}

function vars(node: DriverNode, media = false): ShellText {
  return shell`d=${domainName(node)}
g="$dir/$d"
${media ? shell`media=${`${domainName(node)}${VOLUME_SUFFIXES.unattend}`}\n` : NOTHING}`;
}

export function setupTask(model: DriverModel, hv: DriverHypervisor, node: DriverNode): DriverTask {
  const minutes = SETUP_WAIT_SECONDS / 60;
  const done = shell`[ -f "$g/${SETUP_FINISHED}" ] && v domstate --domain "$d" 2>/dev/null | grep -qx running`;
  return {
    stage: NETWORK,
    host: hv.name,
    name: `setup-${node.name}`,
    description: `wait up to ${minutes} min until Windows Setup on ${node.name} has finished (the guest powers off), then start it again`,
    after: [ref(NETWORK, hv.name, `guest-${node.name}`)],
    check: sh(script(model, hv, shell`${vars(node)}${done}\n`)),
    apply: sh(
      script(
        model,
        hv,
        shell`${vars(node)}began=$(date +%s)
end=$((began + ${SETUP_WAIT_SECONDS}))
said=0
while :; do
  if [ -f "$g/${SETUP_FINISHED}" ]; then
    v domstate --domain "$d" 2>/dev/null | grep -qx running || v start --domain "$d" >/dev/null || fail "cannot start $d"
    echo "${node.name}: Windows is installed and running"
    exit 0
  fi
  state=$(v domstate --reason --domain "$d" 2>/dev/null) || fail "no domain $d: its guest task has not run"
  case "$state" in
    "shut off (shutdown)")
      touch "$g/${SETUP_FINISHED}" || fail "cannot write $g/${SETUP_FINISHED}"
      echo "${node.name}: Windows Setup finished (the guest powered off); starting it"
      continue ;;
    "shut off"*|crashed*) fail "${node.name} stopped during Windows Setup ($state): see its console (virsh vncdisplay $d, on this hypervisor's loopback)" ;;
  esac
  now=$(date +%s)
  [ "$now" -lt "$end" ] || fail "Windows Setup on ${node.name} did not finish within ${minutes} min (virsh vncdisplay $d shows its console on this hypervisor's loopback; kubemix down removes it and its media)"
  [ $((now - said)) -lt 60 ] || {
    echo "${node.name}: Windows Setup running, $(((now - began) / 60)) min of at most ${minutes}"
    said=$now
  }
  sleep 10
done
`,
      ),
    ),
    timeoutSeconds: SETUP_WAIT_SECONDS + 120,
  };
}

export function ejectTask(model: DriverModel, hv: DriverHypervisor, node: DriverNode, answered: TaskRef): DriverTask {
  const inConfig = (live: boolean): ShellText =>
    shell`v dumpxml ${live ? NOTHING : shellCode('--inactive ')}--domain "$d" 2>/dev/null | grep -q "volume='$media'"`;
  const gone = shell`! v vol-info --pool "$pool" --vol "$media" >/dev/null 2>&1 && ! ${inConfig(false)} && ! ${inConfig(true)} && [ ! -e "$g/unattend" ]`;
  return {
    stage: NETWORK,
    host: hv.name,
    name: `eject-${node.name}`,
    description: `once ${node.name} answers with its pinned host key: eject and delete its unattend media (they hold its secrets)`,
    after: [answered],
    check: sh(script(model, hv, shell`${vars(node, true)}${gone}\n`)),
    apply: sh(
      script(
        model,
        hv,
        shell`${vars(node, true)}if ${inConfig(true)}; then
  v change-media --domain "$d" --path ${MEDIA_TARGET} --eject --live --config >/dev/null || fail "cannot eject $media from $d"
elif ${inConfig(false)}; then
  v change-media --domain "$d" --path ${MEDIA_TARGET} --eject --config >/dev/null || fail "cannot eject $media from $d"
fi
if v vol-info --pool "$pool" --vol "$media" >/dev/null 2>&1; then
  v vol-delete --pool "$pool" --vol "$media" >/dev/null || fail "cannot delete volume $media"
fi
rm -rf -- "$g/unattend" || fail "cannot remove $g/unattend"
echo "${node.name}: unattend media ejected and deleted"
`,
      ),
    ),
    timeoutSeconds: 120,
  };
}
