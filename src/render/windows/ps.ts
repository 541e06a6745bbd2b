// PowerShell building blocks shared by the Windows scripts. Every value from
// the model is emitted as a single-quoted literal through `q`, so nothing in
// a spec can become code.
import { psList, psQuote } from '../../util/escape/index.js';

/** A single-quoted PowerShell string literal (every PowerShell single-quote character doubled). */
export const q = psQuote;

/** A PowerShell array literal of single-quoted strings. */
export const qList = psList;

/**
 * The HNS v1 API of the in-box vmcompute.dll, the same entry point Microsoft's
 * own tooling wraps, so no helper module is downloaded. Returns the parsed
 * `Output` of a call, or throws HNS's error. The type is compiled (Add-Type)
 * at the first call, not where the functions are defined: a script that
 * defines them without calling HNS (one that dot-sources every helper) pays
 * nothing for them. The here-string's closing `'@` must start its line
 * (PowerShell about_Quoting_Rules); the C# inside is indented, so the
 * function still ends at the first `}` in column 0.
 */
export const HNS_FUNCTIONS = `function Invoke-KubemixHns([string]$Method, [string]$Path, [string]$Request = '') {
  if (-not ('KubemixHns' -as [type])) {
    Add-Type -TypeDefinition @'
    using System.Runtime.InteropServices;
    public static class KubemixHns {
        [DllImport("vmcompute.dll")]
        public static extern void HNSCall([MarshalAs(UnmanagedType.LPWStr)] string method, [MarshalAs(UnmanagedType.LPWStr)] string path, [MarshalAs(UnmanagedType.LPWStr)] string request, [MarshalAs(UnmanagedType.LPWStr)] out string response);
    }
'@
  }
  $response = ''
  [KubemixHns]::HNSCall($Method, $Path, $Request, [ref]$response)
  $result = $response | ConvertFrom-Json
  if (-not $result.Success) { throw "HNS $Method $Path failed: $($result.Error)" }
  return $result.Output
}
function Get-KubemixHnsNetwork([string]$Name) {
  return @(Invoke-KubemixHns -Method 'GET' -Path '/networks/') | Where-Object { $_.Name -eq $Name } | Select-Object -First 1
}
`;

/** Stop a service if it exists and wait for it; a no-op otherwise. */
export const SERVICE_FUNCTIONS = `function Stop-KubemixService([string]$Name) {
  $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
  if ($null -ne $svc -and $svc.Status -ne 'Stopped') {
    Stop-Service -Name $Name -Force
    $svc.WaitForStatus('Stopped', [TimeSpan]::FromSeconds(60))
  }
}
function Set-KubemixRestart([string]$Name, [bool]$Enabled) {
  # failureflag 1: a non-zero exit counts as a failure too, not only a crash.
  if ($Enabled) {
    & sc.exe failure $Name reset= 86400 actions= restart/10000/restart/10000/restart/30000 | Out-Null
  } else {
    & sc.exe failure $Name reset= 0 actions= none/0/none/0/none/0 | Out-Null
  }
  if ($LASTEXITCODE -ne 0) { throw "sc.exe failure $Name exited $LASTEXITCODE" }
  & sc.exe failureflag $Name 1 | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe failureflag $Name exited $LASTEXITCODE" }
}
function Set-KubemixServiceEnvironment([string]$Name, [string[]]$Values) {
  $key = "HKLM:\\SYSTEM\\CurrentControlSet\\Services\\$Name"
  New-ItemProperty -Path $key -Name 'Environment' -PropertyType MultiString -Value $Values -Force | Out-Null
}
`;

/** Owner-only ACL: SYSTEM and Administrators (by SID, so any UI language works). */
export const ACL_FUNCTIONS = `function Set-KubemixPrivateAcl([string]$Path) {
  $acl = New-Object System.Security.AccessControl.FileSecurity
  $acl.SetAccessRuleProtection($true, $false)
  foreach ($sid in 'S-1-5-18', 'S-1-5-32-544') {
    $who = New-Object System.Security.Principal.SecurityIdentifier($sid)
    $acl.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule($who, 'FullControl', 'Allow')))
  }
  Set-Acl -LiteralPath $Path -AclObject $acl
}
`;

export interface Definition {
  readonly name: string;
  readonly start: number;
  /** The line after the definition's closing `}`. */
  readonly end: number;
  readonly text: string;
}

/** A line where a definition may start: `function Name(` at column 0. */
const DEFINITION_START = /^function /m;

/** Whether a script may define a function (a cheap test before splitting it into lines). */
export function mayDefine(script: string): boolean {
  return DEFINITION_START.test(script);
}

/**
 * The top-level definitions of a script: `function Name(` at column 0 runs to
 * the first `}` at column 0 (bodies are indented). Undefined when a
 * definition does not end.
 */
export function definitionsOf(lines: readonly string[]): Definition[] | undefined {
  const out: Definition[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const name = line.startsWith('function ') ? /^function ([A-Za-z][\w-]*)\s*[({]/.exec(line)?.[1] : undefined;
    if (name === undefined) continue;
    let j = i + 1;
    while (j < lines.length && lines[j] !== '}') j++;
    if (j >= lines.length) return undefined;
    out.push({ name, start: i, end: j + 1, text: lines.slice(i, j + 1).join('\n') });
    i = j;
  }
  return out;
}

/** The pattern finding a name as a word, per name (the helpers' names are few; bounded all the same). */
const WORD_PATTERNS = new Map<string, RegExp>();

/** Whether `text` names `name` as a word (PowerShell names are case-insensitive; `-` joins a name). */
function mentions(text: string, name: string): boolean {
  let pattern = WORD_PATTERNS.get(name);
  if (pattern === undefined) {
    if (WORD_PATTERNS.size >= 1024) WORD_PATTERNS.clear();
    pattern = new RegExp(`(?<![\\w-])${name}(?![\\w-])`, 'i');
    WORD_PATTERNS.set(name, pattern);
  }
  return pattern.test(text);
}

/** Marks the lines of `defs` in a mask of `size` lines. */
function lineMask(size: number, defs: Iterable<Definition>): Uint8Array {
  const mask = new Uint8Array(size);
  for (const d of defs) mask.fill(1, d.start, d.end);
  return mask;
}

/** A script's lines and definitions, and the definitions it does not need. */
export interface Pruning {
  readonly lines: readonly string[];
  readonly defs: readonly Definition[];
  /** Never used, or a second identical copy of one that is. */
  readonly dropped: Set<Definition>;
}

/**
 * Which helper definitions a script never uses, and which repeat an
 * identical earlier one. A definition is used when its name appears anywhere
 * in the rest of what stays (code, string or comment), found from the
 * script's own statements through the helpers they use. Undefined when the
 * script defines nothing, or its definitions cannot be delimited.
 */
export function pruning(script: string): Pruning | undefined {
  // Most scripts define nothing: no need to split them into lines (definitions start at column 0).
  if (!mayDefine(script)) return undefined;
  const lines = script.split('\n');
  const defs = definitionsOf(lines);
  if (defs === undefined || defs.length === 0) return undefined;
  const first = new Map<string, Definition>();
  const dropped = new Set<Definition>();
  for (const d of defs) {
    const seen = first.get(d.name.toLowerCase());
    if (seen === undefined) first.set(d.name.toLowerCase(), d);
    else if (seen.text === d.text) dropped.add(d);
  }
  const inDefinition = lineMask(lines.length, defs);
  const statements = lines.filter((_, i) => inDefinition[i] === 0).join('\n');
  const used = new Set<Definition>();
  const queue = [statements];
  for (let text = queue.pop(); text !== undefined; text = queue.pop()) {
    for (const d of defs) {
      if (used.has(d) || dropped.has(d) || !mentions(text, d.name)) continue;
      used.add(d);
      queue.push(d.text);
    }
  }
  for (const d of defs) if (!used.has(d) && !dropped.has(d)) dropped.add(d);
  return { lines, defs, dropped };
}

/** The script's lines without those of `dropped`, joined. */
export function withoutDefinitions(lines: readonly string[], dropped: Iterable<Definition>): string {
  const gone = lineMask(lines.length, dropped);
  return lines.filter((_, i) => gone[i] === 0).join('\n');
}

/**
 * The script without the helper definitions it never uses, and without a
 * second, identical copy of one (`pruning`): what runs is unchanged, as a
 * definition does nothing until something calls it. A script whose
 * definitions cannot be delimited is returned as it is.
 */
export function withoutUnusedHelpers(script: string): string {
  const p = pruning(script);
  return p === undefined || p.dropped.size === 0 ? script : withoutDefinitions(p.lines, p.dropped);
}
