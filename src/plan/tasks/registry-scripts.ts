// Shell for the registry's run-time material: its TLS key and certificate
// (signed on the host by the cluster CA) and its htpasswd file. Secrets come
// in as `{{secret:NAME}}` inside heredocs; the executor fills them in and
// feeds the script on stdin, so they never reach a command line or the plan.
import { SECRET_NAMES } from '../../model/secret-names.js';
import { SERVICES } from '../../matrix/index.js';

export const SECRET = {
  caCert: SECRET_NAMES.clusterCaCert,
  caKey: SECRET_NAMES.clusterCaKey,
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

const heredoc = (target: string, secret: string): string => `cat > ${target} <<'KUBEMIX_EOF'\n{{secret:${secret}}}\nKUBEMIX_EOF`;

/** Exits 0 when key and certificate exist, match, name the registry, chain to the current CA and last 30 more days. */
export function registryTlsCheck(t: RegistryTlsInput): string {
  return `set -eu
dir=${t.dir}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
${heredoc('"$work/ca.crt"', SECRET.caCert)}
cmp -s "$work/ca.crt" "$dir/ca.crt"
openssl verify -CAfile "$dir/ca.crt" "$dir/registry.crt" >/dev/null
openssl x509 -in "$dir/registry.crt" -noout -checkend 2592000 >/dev/null
openssl x509 -in "$dir/registry.crt" -noout -checkhost ${t.host} | grep -q 'does match'
openssl x509 -in "$dir/registry.crt" -noout -checkip ${t.ip} | grep -q 'does match'
[ "$(openssl x509 -in "$dir/registry.crt" -noout -pubkey)" = "$(openssl pkey -in "$dir/registry.key" -pubout)" ]
`;
}

/** A fresh P-256 key and a certificate for the registry's name and IP, signed by the cluster CA. */
export function registryTlsApply(t: RegistryTlsInput): string {
  const trust = t.trustAnchor === undefined ? '' : `install -m 0644 "$dir/ca.crt" ${t.trustAnchor}\nupdate-ca-certificates >/dev/null\n`;
  return `set -eu
umask 077
dir=${t.dir}
install -d -m 0750 -o root -g ${t.group} "$dir"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
${heredoc('"$work/ca.crt"', SECRET.caCert)}
${heredoc('"$work/ca.key"', SECRET.caKey)}
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -subj "/CN=${t.host}" -keyout "$work/registry.key" -out "$work/registry.csr" 2>/dev/null
printf '%s\\n' 'subjectAltName=DNS:${t.host},IP:${t.ip}' 'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' 'basicConstraints=critical,CA:FALSE' > "$work/ext"
openssl x509 -req -sha256 -days ${SERVICES.registryCertDays} -in "$work/registry.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -set_serial "0x$(openssl rand -hex 16)" -extfile "$work/ext" -out "$work/registry.crt" 2>/dev/null
install -m 0644 "$work/ca.crt" "$dir/ca.crt"
install -m 0644 "$work/registry.crt" "$dir/registry.crt"
install -m 0640 -o root -g ${t.group} "$work/registry.key" "$dir/registry.key"
${trust}`;
}

/** Exits 0 when the htpasswd file holds the current password for the registry user. */
export function htpasswdCheck(path: string): string {
  return `htpasswd -v -i ${path} ${SERVICES.registryUser} 2>/dev/null <<'KUBEMIX_EOF'\n{{secret:${SECRET.registryPassword}}}\nKUBEMIX_EOF\n`;
}

/** bcrypt entry for the registry user; written beside and renamed so readers never see half a file. */
export function htpasswdApply(path: string, group: string): string {
  return `set -eu
umask 027
htpasswd -c -B -i ${path}.new ${SERVICES.registryUser} 2>/dev/null <<'KUBEMIX_EOF'
{{secret:${SECRET.registryPassword}}}
KUBEMIX_EOF
chgrp ${group} ${path}.new
chmod 0640 ${path}.new
mv -f ${path}.new ${path}
`;
}
