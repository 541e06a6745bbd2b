// kubectl's tables (`get pods -A -o wide`, `get tigerastatus`) read back into
// rows. kubectl prints them through Go's tabwriter: every cell starts at its
// header's column, cells are padded with spaces, and a cell may hold a single
// space (`RESTARTS` as `3 (2m ago)`, the header `NOMINATED NODE`), so columns
// are cut at the header's cell starts rather than split on whitespace. Pure.

export type Row = Readonly<Record<string, string>>;

/** The rows of the first table in `text` (from its header line, the one holding `NAME`). */
export function readTable(text: string): Row[] {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /(^|\s)NAME(\s|$)/.test(l));
  if (at < 0) return [];
  // Header cells: words joined by single spaces, apart by two or more.
  const cells = [...(lines[at] ?? '').matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], start: m.index }));
  return lines
    .slice(at + 1)
    .filter((l) => l.trim() !== '')
    .map((line) =>
      Object.fromEntries(cells.map((c, i) => [c.name, line.slice(c.start, cells[i + 1]?.start ?? line.length).trim()])),
    );
}

/** A pod is up when its phase column says Running and every container is ready (`READY 2/2`). */
export function podUp(row: Row): boolean {
  const [ready, total] = (row['READY'] ?? '').split('/');
  return row['STATUS'] === 'Running' && ready !== undefined && ready === total;
}

/** The pods of `cluster-pods` (kubectl get pods -A -o wide) in `namespace` whose name starts with `prefix`. */
export function podsOf(table: readonly Row[], namespace: string, prefix: string): Row[] {
  return table.filter((r) => r['NAMESPACE'] === namespace && (r['NAME'] ?? '').startsWith(prefix));
}

/** Kubernetes Node names are lower case; a spec's node name may not be. */
export function onNode(row: Row, node: string): boolean {
  return (row['NODE'] ?? '').toLowerCase() === node.toLowerCase();
}
