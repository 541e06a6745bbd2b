// SSH connection fields of the hosts a driver hands the plan.
import type { DriverHost, DriverSshTarget } from './types.js';

type SshFields = Pick<DriverHost, 'address' | 'port' | 'user' | 'identityFile' | 'bastion'>;

/** Connection fields without the keys the spec left out. */
export function sshFields(t: DriverSshTarget): SshFields {
  const b = t.bastion;
  return {
    address: t.address,
    port: t.port,
    user: t.user,
    ...(t.identityFile === undefined ? {} : { identityFile: t.identityFile }),
    ...(b === undefined
      ? {}
      : {
          bastion: {
            address: b.address,
            port: b.port,
            user: b.user,
            ...(b.identityFile === undefined ? {} : { identityFile: b.identityFile }),
          },
        }),
  };
}

/** A host as a jump host (one hop; its own bastion is not chained). */
export function hopThrough(t: DriverSshTarget): NonNullable<DriverHost['bastion']> {
  const { bastion: _ownBastion, ...hop } = sshFields(t);
  return hop;
}
