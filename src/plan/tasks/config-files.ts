// A task that puts rendered files in place and (re)starts the service that
// reads them. Idempotent by content: the check compares the sha256 of every
// file on the host with the planned one, and asks whether the service runs.
import { sha256Hex } from '../../util/json.js';
import { artifactId } from '../artifact-path.js';
import { sh, task } from '../task.js';
import type { Stage, Task } from '../types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';

export interface ConfigTaskInput {
  readonly stage: Stage;
  readonly host: string;
  readonly name: string;
  readonly description: string;
  readonly files: readonly RenderedArtifact[];
  /** Shell run after upload and before the restart: the owning tool's own check. */
  readonly validate?: ShellText;
  /** Shell that exits 0 when the running state matches the files (a loaded module, a sysctl value). */
  readonly live?: ShellText;
  /** How long the apply waits for `live` after the restart (default 15 s; a registry under emulation needs longer). */
  readonly liveWaitSeconds?: number;
  /** systemd unit to enable and restart once the files are valid. */
  readonly service?: string;
  readonly after?: readonly string[];
  readonly timeoutSeconds?: number;
}

/** `{{secret:NAME}}` names in a text. */
function secretNames(text: string): string[] {
  return [...text.matchAll(/\{\{secret:([A-Za-z0-9_.-]+)\}\}/g)].map((m) => m[1] ?? '');
}

export function configTask(input: ConfigTaskInput): Task {
  // A file naming a secret holds its value on the host: the executor compares it (filled in) before
  // the check runs, so the check sums only the files whose planned text is what the host holds.
  const plain = input.files.filter((f) => secretNames(f.content).length === 0);
  const secrets = [...new Set(input.files.flatMap((f) => secretNames(f.content)))].sort();
  const sums = plain.map((f) => `${sha256Hex(f.content)}  ${f.remotePath}`).join('\n');
  // Every part must hold: the script runs under `sh -s`, where only the last line's status
  // counts, and `set -e` would let the first half of an `a && b` part fail unseen.
  const check = shellLines(
    [
      ...(plain.length === 0 ? [] : [shell`sha256sum --check --status <<'KUBEMIX_SUMS'\n${sums}\nKUBEMIX_SUMS`]),
      ...(input.live === undefined ? [] : [input.live]),
      ...(input.service === undefined ? [] : [shell`systemctl is-active --quiet ${input.service}`]),
    ].map((part) => shell`{ ${part}\n} || exit 1`),
  );
  const apply = shellLines([
    shellCode('set -eu'),
    // Uploads land with the planned mode; the owner needs a user that only
    // exists once the package is installed, so it is set here.
    ...input.files.map((f) => shell`chown ${f.owner} ${f.remotePath} && chmod ${f.mode} ${f.remotePath}`),
    ...(input.validate === undefined ? [] : [input.validate]),
    ...(input.service === undefined
      ? []
      : [shell`systemctl enable --quiet ${input.service}`, shell`systemctl restart ${input.service}`]),
    // A service can be active and still not serve its files (a zone named could not read):
    // the apply fails unless the live state follows within 15 s.
    ...(input.live === undefined
      ? []
      : [
          waitFor(
            input.live,
            input.liveWaitSeconds ?? 15,
            `${input.name}: ${input.service ?? 'the host'} does not serve what the files say`,
          ),
        ]),
  ]);
  return task({
    stage: input.stage,
    host: input.host,
    name: input.name,
    description: input.description,
    ...(input.after === undefined ? {} : { after: input.after }),
    check: sh(check),
    apply: sh(apply),
    uploads: input.files.map((f) => artifactId(f.node, f.remotePath)),
    ...(secrets.length === 0 ? {} : { secrets }),
    ...(input.timeoutSeconds === undefined ? {} : { timeoutSeconds: input.timeoutSeconds }),
  });
}

function waitFor(live: ShellText, seconds: number, failure: string): ShellText {
  const tries = String(Math.max(1, Math.ceil(seconds * 2)));
  return shell`i=0
until { ${live}; } >/dev/null 2>&1; do
  i=$((i + 1)); [ "$i" -lt ${tries} ] || { echo ${failure} >&2; exit 1; }
  sleep 0.5
done`;
}
