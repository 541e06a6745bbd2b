// task-create-network with several hypervisors: the bridge and VXLAN link of
// render/overlay.ts, and the systemd unit that makes them again at every
// boot, installed and enabled as `systemctl enable` does for
// `WantedBy=multi-user.target` (a link in multi-user.target.wants/), so it
// works whether systemd runs now or not; systemd reloads its units when it does.
import { shell, type ShellText } from '../../../util/escape/index.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverTask } from '../../types.js';
import { DEFINITION } from '../artifacts.js';
import { definitionsDir } from '../layout.js';
import { isGateway, OVERLAY_PORT, overlayCheckScript, overlayUnitName, UNIT_DIR } from '../render/overlay.js';
import { CIDR_TASK } from './cidr.js';
import { script, NETWORK, ref } from './common.js';

export const OVERLAY_TASK = 'overlay';

function unitVars(model: DriverModel): ShellText {
  const unit = overlayUnitName(model);
  return shell`units=${UNIT_DIR}
unit=${unit}
wants="$units/multi-user.target.wants/$unit"
`;
}

const INSTALLED = shell`[ -f "$units/$unit" ] && cmp -s "$dir/${DEFINITION.overlayUnit}" "$units/$unit" && [ "$(readlink "$wants")" = "$units/$unit" ]`;

const INSTALL = shell`mkdir -p "$units/multi-user.target.wants" || fail "cannot make $units/multi-user.target.wants"
install -m 0644 "$dir/${DEFINITION.overlayUnit}" "$units/$unit.part" && mv -f "$units/$unit.part" "$units/$unit" ||
  fail "cannot install $units/$unit"
ln -sfn "$units/$unit" "$wants" || fail "cannot enable $unit"
if [ -d /run/systemd/system ]; then systemctl daemon-reload || fail "systemctl daemon-reload failed"; fi
echo "$unit makes the mesh again at boot"
`;

/**
 * On the gateway after its libvirt network (whose bridge it joins);
 * elsewhere before it (the bridged network attaches guests to this bridge).
 */
export function overlayTask(model: DriverModel, hv: DriverHypervisor): DriverTask {
  const gateway = isGateway(model, hv);
  const defs = definitionsDir(model);
  return {
    stage: NETWORK,
    host: hv.name,
    name: OVERLAY_TASK,
    description: `join ${hv.name}'s bridge to ${model.hypervisors.length - 1} peer(s) over VXLAN (UDP ${OVERLAY_PORT}, MTU ${model.cluster.network.nodeMtu}), again at every boot (systemd unit ${overlayUnitName(model)})`,
    after: [ref(NETWORK, hv.name, gateway ? 'network' : CIDR_TASK)],
    check: sh(script(model, hv, shell`${overlayCheckScript(model, hv)}${unitVars(model)}${INSTALLED}\n`)),
    apply: sh(script(model, hv, shell`sh "$dir/${DEFINITION.overlay}" || exit $?\n${unitVars(model)}${INSTALL}`)),
    uploads: [`${defs}/${DEFINITION.overlay}`, `${defs}/${DEFINITION.overlayUnit}`],
    timeoutSeconds: 180,
  };
}
