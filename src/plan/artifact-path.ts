// Where an artifact lies in a plan directory: `artifacts/<node>/<path on host>`,
// with a Windows path `C:\k\x` becoming `artifacts/<node>/C/k/x`.

export function artifactLocalPath(node: string, remotePath: string): string {
  const windows = /^([A-Za-z]):[\\/](.*)$/.exec(remotePath);
  const parts = windows === null
    ? remotePath.split('/')
    : [windows[1]?.toUpperCase() ?? '', ...(windows[2] ?? '').split(/[\\/]/)];
  const clean = parts.filter((p) => p !== '' && p !== '.');
  if (clean.some((p) => p === '..')) throw new Error(`artifact path escapes its folder: ${remotePath}`);
  return ['artifacts', node, ...clean].join('/');
}

export function artifactId(node: string, remotePath: string): string {
  return `${node}:${remotePath}`;
}

/** Path prefixes of install media: files a driver puts on the media a VM installs from. */
export const INSTALL_MEDIA_PREFIXES = ['autounattend/'] as const;

/**
 * Install media is not uploaded to its node by any task: the driver that
 * creates the node's VM reads it (filling `{{secret:NAME}}` references as the
 * executor does for uploads) and writes everything under the prefix to the
 * root of the media the VM installs from.
 */
export function isInstallMedia(remotePath: string): boolean {
  return INSTALL_MEDIA_PREFIXES.some((p) => remotePath.startsWith(p));
}
