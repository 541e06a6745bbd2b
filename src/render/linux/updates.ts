// Distro updates on a Linux node for `kubemix patch --linux`, with the
// Kubernetes packages held so a routine update never moves the cluster's
// version: apt-mark hold on Debian and Ubuntu (apt(8) keeps held packages
// back), and on RHEL-like systems the pkgs.k8s.io repository's `exclude=`
// (renderKubernetesRepo) plus `--exclude` on the command line. A reboot is
// due when /var/run/reboot-required exists (Debian's update-notifier-common
// convention, written by kernel and libc packages) or `dnf needs-restarting
// -r` exits 1 (dnf-plugins-core). Pure: the distro family in, sh text out.
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';
import { KUBERNETES_PACKAGES } from './kubernetes-repo.js';

export interface LinuxUpdateSelection {
  /** Only updates from the security archive (Debian `*-security`, dnf `--security`). */
  readonly securityOnly: boolean;
}

/** Held: what kubemix installs from pkgs.k8s.io, and what that repository's dnf `exclude=` names. */
const HELD = [...KUBERNETES_PACKAGES, 'cri-tools', 'kubernetes-cni'];

/**
 * Shell functions: kubemix_pending prints `pending<TAB>package<TAB>old -> new`
 * per upgradable package (held ones never), kubemix_reboot_required exits 0
 * when the host waits for a reboot.
 */
function functions(family: 'apt' | 'dnf', selection: LinuxUpdateSelection): ShellText {
  if (family === 'apt')
    // `apt-get -s` prints `Inst NAME [OLD] (NEW ORIGIN [ARCH])` per package it would install.
    return shell`kubemix_pending() {
  apt-get -s -q -o Debug::NoLocking=1 upgrade --with-new-pkgs | awk -v held=${HELD.join(' ')} -v security=${selection.securityOnly ? 1 : 0} '
    BEGIN { n = split(held, h, " "); for (i = 1; i <= n; i++) skip[h[i]] = 1 }
    $1 == "Inst" && !($2 in skip) && (!security || $0 ~ /-security/) {
      old = ""; new = $3
      if ($3 ~ /^\\[/) { old = substr($3, 2, length($3) - 2); new = $4 }
      printf "pending\\t%s\\t%s -> %s\\n", $2, old, substr(new, 2) }'
}
kubemix_reboot_required() { [ -f /var/run/reboot-required ]; }
`;
  const security = selection.securityOnly ? shellCode(' --security') : shellCode('');
  return shell`kubemix_pending() {
  # check-update exits 100 when updates exist; lines are NAME.ARCH VERSION REPO.
  dnf -q check-update${security} ${`--exclude=${HELD.join(',')}`} | awk 'NF == 3 && $1 ~ /\\./ { printf "pending\\t%s\\t-> %s\\n", $1, $2 }' || true
}
kubemix_reboot_required() {
  rc=0; dnf -q needs-restarting -r >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 1 ]
}
`;
}

/** Holds the Kubernetes packages that are installed (apt-mark refuses unknown names); apt's own view of what is. */
function holdScript(family: 'apt' | 'dnf'): ShellText {
  if (family === 'dnf') return shellCode('');
  return shell`installed=$({ apt-mark showmanual; apt-mark showauto; } | grep -Fx ${shellLines(
    HELD.map((p) => shell`-e ${p}`),
    ' ',
  )} || true)
[ -z "$installed" ] || apt-mark hold $installed >/dev/null
`;
}

/** The patch query for a Linux node: refresh the package lists, print what is pending. Installs nothing. */
export function listLinuxPending(family: 'apt' | 'dnf', selection: LinuxUpdateSelection): ShellText {
  const refresh =
    family === 'apt' ? shellCode('apt-get update -q >/dev/null') : shellCode('dnf -q makecache >/dev/null');
  return shell`set -eu
export DEBIAN_FRONTEND=noninteractive
${functions(family, selection)}${refresh}
kubemix_pending
if kubemix_reboot_required; then echo reboot-required; fi
`;
}

/**
 * Check: nothing pending and no reboot due (so after the apply it fails
 * until the reboot is over). Apply: hold the Kubernetes packages, install
 * the pending updates, and when a reboot is due schedule it a few seconds
 * out so this session returns first.
 */
export function installLinuxUpdates(
  family: 'apt' | 'dnf',
  selection: LinuxUpdateSelection,
): { check: ShellText; apply: ShellText } {
  const check = shell`export DEBIAN_FRONTEND=noninteractive
${functions(family, selection)}[ -z "$(kubemix_pending)" ] && ! kubemix_reboot_required`;
  const install =
    family === 'apt'
      ? shellCode(`apt-get update -q >/dev/null
packages=$(kubemix_pending | cut -f 2)
[ -z "$packages" ] || apt-get install -y -q --only-upgrade -o Dpkg::Options::=--force-confold $packages`)
      : shell`dnf -y -q upgrade${selection.securityOnly ? shellCode(' --security') : shellCode('')} ${`--exclude=${HELD.join(',')}`}`;
  const apply = shell`set -eu
export DEBIAN_FRONTEND=noninteractive
${functions(family, selection)}${holdScript(family)}${install}
if kubemix_reboot_required; then
  echo 'a reboot is due: rebooting in 10 s'
  systemd-run --quiet --on-active=10 --timer-property=AccuracySec=1s systemctl reboot || shutdown -r +1
fi
`;
  return { check, apply };
}
