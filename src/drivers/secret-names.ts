// Secrets of the machines a driver creates, named once (model/secret-names.ts
// re-exports them with the rest). The executor generates them; plans and
// rendered files refer to them as `{{secret:NAME}}` only.

/**
 * The public half (`ssh-ed25519 AAAA…`) of the key kubemix logs in to the
 * VMs it creates with (cloud-init's authorized key; administrators_authorized_keys
 * of an unattended Windows install).
 */
export const CLUSTER_SSH_PUBLIC_KEY = 'cluster-ssh-public-key';

/** Local Administrator password of a Windows VM kubemix installs (Autounattend.xml); generated. */
export const WINDOWS_ADMIN_PASSWORD = 'windows-admin-password';

/**
 * A VM's pre-generated SSH host key (OpenSSH-format ed25519 private key), so
 * its public half is pinned before first contact.
 */
export function sshHostKeySecret(node: string): string {
  return `ssh-host-key-${node.toLowerCase()}`;
}

/** The same key, base64 of its OpenSSH text: one line, for YAML (cloud-init write_files, encoding b64). */
export function sshHostKeyBase64Secret(node: string): string {
  return `${sshHostKeySecret(node)}-base64`;
}

/** Its public half as an authorized_keys / known_hosts key (`ssh-ed25519 AAAA…`). */
export function sshHostPublicKeySecret(node: string): string {
  return `${sshHostKeySecret(node)}-public`;
}
