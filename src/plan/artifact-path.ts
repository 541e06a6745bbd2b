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
