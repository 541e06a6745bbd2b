// Shell for the registry's run-time material: its TLS key and certificate
// (issued on the deployer from the cluster CA, whose key never comes here)
// and its htpasswd file. Secrets come
// in as `{{secret:NAME}}` inside heredocs; the executor fills them in and
// feeds the script on stdin, so they never reach a command line or the plan.
import { SECRET_NAMES, secretRef, servingTlsSecrets } from '../../model/secret-names.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import { SERVICES } from '../../matrix/index.js';

export const SECRET = {
  caCert: SECRET_NAMES.clusterCaCert,
  registryPassword: SECRET_NAMES.registryPassword,
} as const;

export interface RegistryTlsInput {
  readonly dir: string;
  readonly group: string;
  readonly host: string;
  readonly ip: string;
  /** Where the host's own trust store takes extra CAs; omitted in tests. */
  readonly trustAnchor?: string;
}

/** The registry's certificate and key in the secret store (the executor issues them). */
export function registryTlsSecrets(t: Pick<RegistryTlsInput, 'host' | 'ip'>): {
  readonly cert: string;
  readonly key: string;
} {
  return servingTlsSecrets(t.host, t.ip);
}

const heredoc = (target: ShellText, secret: string): ShellText =>
  shell`cat > ${target} <<'KUBEMIX_EOF'\n${secretRef(secret)}\nKUBEMIX_EOF`;
const CA = shellCode('"$work/ca.crt"');
const CERT = shellCode('"$work/registry.crt"');
const KEY = shellCode('"$work/registry.key"');

/**
 * Exits 0 when key and certificate are the issued ones, name the registry,
 * chain to the current CA and last 30 more days.
 */
export function registryTlsCheck(t: RegistryTlsInput): ShellText {
  const s = registryTlsSecrets(t);
  return shell`set -eu
dir=${t.dir}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
${heredoc(CA, SECRET.caCert)}
${heredoc(CERT, s.cert)}
cmp -s "$work/ca.crt" "$dir/ca.crt"
cmp -s "$work/registry.crt" "$dir/registry.crt"
openssl verify -CAfile "$dir/ca.crt" "$dir/registry.crt" >/dev/null
openssl x509 -in "$dir/registry.crt" -noout -checkend 2592000 >/dev/null
openssl x509 -in "$dir/registry.crt" -noout -checkhost ${t.host} | grep -q 'does match'
openssl x509 -in "$dir/registry.crt" -noout -checkip ${t.ip} | grep -q 'does match'
[ "$(openssl x509 -in "$dir/registry.crt" -noout -pubkey)" = "$(openssl pkey -in "$dir/registry.key" -pubout)" ]
`;
}

/** Installs the CA certificate and the registry's issued certificate and key (no key material made here). */
export function registryTlsApply(t: RegistryTlsInput): ShellText {
  const s = registryTlsSecrets(t);
  const trust =
    t.trustAnchor === undefined
      ? shellCode('')
      : shell`install -m 0644 "$dir/ca.crt" ${t.trustAnchor}\nupdate-ca-certificates >/dev/null\n`;
  return shell`set -eu
umask 077
dir=${t.dir}
install -d -m 0750 -o root -g ${t.group} "$dir"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
${heredoc(CA, SECRET.caCert)}
${heredoc(CERT, s.cert)}
${heredoc(KEY, s.key)}
[ "$(openssl x509 -in "$work/registry.crt" -noout -pubkey)" = "$(openssl pkey -in "$work/registry.key" -pubout)" ]
install -m 0644 "$work/ca.crt" "$dir/ca.crt"
install -m 0644 "$work/registry.crt" "$dir/registry.crt"
install -m 0640 -o root -g ${t.group} "$work/registry.key" "$dir/registry.key"
${trust}`;
}

/** Exits 0 when the htpasswd file holds the current password for the registry user. */
export function htpasswdCheck(path: string): ShellText {
  return shell`htpasswd -v -i ${path} ${SERVICES.registryUser} 2>/dev/null <<'KUBEMIX_EOF'\n${secretRef(SECRET.registryPassword)}\nKUBEMIX_EOF\n`;
}

/** bcrypt entry for the registry user; written beside and renamed so readers never see half a file. */
export function htpasswdApply(path: string, group: string): ShellText {
  const next = `${path}.new`;
  return shell`set -eu
umask 027
htpasswd -c -B -i ${next} ${SERVICES.registryUser} 2>/dev/null <<'KUBEMIX_EOF'
${secretRef(SECRET.registryPassword)}
KUBEMIX_EOF
chgrp ${group} ${next}
chmod 0640 ${next}
mv -f ${next} ${path}
`;
}
