// kubemix's PowerShell helper functions in one file on each Windows node,
// C:\k\kubemix\helpers-<hash>.ps1, placed by the node's first step
// (win-helpers) and dot-sourced by the applies of the steps after it, which
// used to define each helper they call themselves: those copies were most of
// a Windows node's plan text.
//
// - The file only defines functions: dot-sourcing it runs nothing else (the
//   HNS type is compiled at the first HNS call, see HNS_FUNCTIONS).
// - Its name carries a hash of its content: a plan's scripts name exactly the
//   file that plan places, so a newer kubemix never runs against an older
//   file (an older one stays beside it, unused, until reset).
// - A script keeps inline any helper the file does not hold, and the checks
//   keep theirs (`--check` runs every check in no order, before anything is
//   placed). boot.ps1, reset.ps1, the install media's setup script and the
//   day-2 plans (patch, upgrade, diagnose) stay self-contained: they run at
//   boot, on nodes in any state, or on nodes an older kubemix set up.
// - The executor runs each script with `powershell.exe -ExecutionPolicy Bypass
//   -File` (transport/framing.ts), so dot-sourcing a local file is allowed.
import { sha256Hex } from '../../util/json.js';
import { WINDOWS_NODES, type RenderedArtifact } from '../types.js';
import { CALICO_ENDPOINT_FUNCTION } from './calico.js';
import { DOWNLOAD_FUNCTION } from './downloads.js';
import { WIN } from './paths.js';
import {
  ACL_FUNCTIONS,
  HNS_FUNCTIONS,
  SERVICE_FUNCTIONS,
  definitionsOf,
  pruning,
  q,
  withoutDefinitions,
} from './ps.js';
import { checkThat, type WindowsScripts } from './step.js';

/** The file's text: a comment line, then the definitions (ASCII only: Windows PowerShell 5.1 reads a file without BOM in the ANSI code page). */
export const HELPERS_CONTENT = `# kubemix's PowerShell helper functions, dot-sourced by its steps on this node. Defines functions only.
${DOWNLOAD_FUNCTION}${SERVICE_FUNCTIONS}${HNS_FUNCTIONS}${CALICO_ENDPOINT_FUNCTION}${ACL_FUNCTIONS}`;

/** Where the file lies on every Windows node: its name carries the first 16 hex digits of its SHA-256. */
export const HELPERS_PATH = `${WIN.kubemix}\\helpers-${sha256Hex(HELPERS_CONTENT).slice(0, 16)}.ps1`;

/** The file's definitions by lower-case name (PowerShell names are case-insensitive). */
const FILE_DEFINITIONS = new Map(
  (definitionsOf(HELPERS_CONTENT.split('\n')) ?? []).map((d) => [d.name.toLowerCase(), d] as const),
);

/** The functions the file defines, in its order. */
export const HELPER_NAMES: readonly string[] = [...FILE_DEFINITIONS.values()].map((d) => d.name);

/** The one artifact every Windows node's win-helpers step uploads (one file in the plan, not one per node). */
export function helpersArtifact(): RenderedArtifact {
  return {
    node: WINDOWS_NODES,
    remotePath: HELPERS_PATH,
    mode: '0644',
    owner: 'Administrators',
    content: HELPERS_CONTENT,
  };
}

/** What a script runs first instead of its own helper definitions (after `$ErrorActionPreference`). */
export const DOT_SOURCE_HELPERS = `if (-not (Test-Path -LiteralPath ${q(HELPERS_PATH)})) { throw ${q(
  `${HELPERS_PATH} is missing: run this node's win-helpers task again (kubemix up --from it)`,
)} }
. ${q(HELPERS_PATH)}
`;

/**
 * The script without the helpers it does not use (`withoutUnusedHelpers`),
 * and with those the file holds dot-sourced from it instead of defined
 * inline. Only a definition whose text equals the file's is replaced, so the
 * function that runs is the same; one of the file's names defined otherwise
 * is a kubemix bug (two helpers drifted apart), refused here.
 */
export function withHelpersFile(script: string): string {
  const p = pruning(script);
  if (p === undefined) return script;
  const fromFile = p.defs.filter((d) => {
    const known = p.dropped.has(d) ? undefined : FILE_DEFINITIONS.get(d.name.toLowerCase());
    if (known === undefined) return false;
    if (known.text !== d.text)
      throw new Error(`a Windows script defines ${d.name} other than ${HELPERS_PATH} does: the two must be one text`);
    return true;
  });
  if (p.dropped.size === 0 && fromFile.length === 0) return script;
  const body = withoutDefinitions(p.lines, [...p.dropped, ...fromFile]);
  return fromFile.length === 0 ? body : `${DOT_SOURCE_HELPERS}${body}`;
}

/**
 * The win-helpers step: the executor places the file (an upload, compared by
 * SHA-256 before the check, so a missing or different file re-runs the step);
 * the apply dot-sources it once to prove it parses and defines every helper.
 */
export function helpersStep(): WindowsScripts {
  const names = HELPER_NAMES.map(q).join(', ');
  return {
    check: checkThat(`Test-Path -LiteralPath ${q(HELPERS_PATH)}`),
    apply: `. ${q(HELPERS_PATH)}
$missing = @(${names}) | Where-Object { $null -eq (Get-Command -Name $_ -CommandType Function -ErrorAction SilentlyContinue) }
if (@($missing).Count -gt 0) { throw (${q(`${HELPERS_PATH} does not define `)} + ($missing -join ', ')) }
`,
  };
}
