// Static checks for rendered PowerShell: a real grammar (tree-sitter-powershell)
// plus kubemix's own rules. Forbidden texts are assembled from pieces so that
// no source file in the repository contains them whole.
import Parser from 'tree-sitter';

type SyntaxNode = Parser.SyntaxNode;

// The grammar's Node binding is an ES module with top-level await: import it, don't require it.
const grammar = ((await import('tree-sitter-powershell/bindings/node/index.js')) as { default: Parser.Language })
  .default;
const parser = new Parser();
parser.setLanguage(grammar);

function parse(script: string): Parser.Tree {
  return parser.parse(script, undefined, { bufferSize: Buffer.byteLength(script, 'utf8') * 2 + 1024 });
}

function walk(node: SyntaxNode, visit: (n: SyntaxNode) => void): void {
  visit(node);
  for (const child of node.children) walk(child, visit);
}

/** Syntax errors as `line:col: text`; empty when the script parses cleanly. */
export function parseErrors(script: string): string[] {
  const out: string[] = [];
  walk(parse(script).rootNode, (n) => {
    if (n.type === 'ERROR' || n.isMissing)
      out.push(
        `${n.startPosition.row + 1}:${n.startPosition.column + 1}: ${n.isMissing ? `missing ${n.type}` : JSON.stringify(n.text.slice(0, 60))}`,
      );
  });
  return out;
}

function commandNames(script: string): string[] {
  const names: string[] = [];
  walk(parse(script).rootNode, (n) => {
    if (n.type === 'command_name') names.push(n.text.toLowerCase());
  });
  return names;
}

function doubleQuoted(script: string): string[] {
  const out: string[] = [];
  walk(parse(script).rootNode, (n) => {
    if (n.type === 'expandable_string_literal') out.push(n.text);
  });
  return out;
}

const OFF = ['F', 'alse'].join('');
const FORBIDDEN: readonly [RegExp, string][] = [
  [new RegExp(`Set-NetFirewallProfile[^\\n]*-Enabled\\s*(:\\s*)?(\\$?${OFF}|0)`, 'i'), 'disables the firewall'],
  [new RegExp(['advfirewall', 'set', '\\S+', 'state', 'off'].join('\\s+'), 'i'), 'disables the firewall'],
  [new RegExp(['Disable', 'Realtime', 'Monitoring'].join(''), 'i'), 'touches Defender real-time protection'],
  [/Set-MpPreference[^\n]*-Disable/i, 'disables a Defender feature'],
  [/Uninstall-WindowsFeature[^\n]*Defender/i, 'removes Defender'],
];

const SECRETS: readonly [RegExp, string][] = [
  [/\b[a-z0-9]{6}\.[a-z0-9]{16}\b/, 'a bootstrap token'],
  // An image digest (`image@sha256:…`) is a public identity, not kubeadm's CA hash.
  [/(?<!@)sha256:[0-9a-f]{64}/, 'a CA certificate hash'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  // publicKeyToken: the public identity of a Windows component in an answer file, not a credential.
  [
    /(?<!publicKey)(token|password)[ \t]*[:=][ \t]*['"]?(?!\{\{secret:)[A-Za-z0-9+/._-]{8,}/i,
    'a credential not taken from the secret store',
  ],
];

/** Secrets appear only as {{secret:NAME}} references. */
export function secretProblems(text: string): string[] {
  return SECRETS.filter(([re]) => re.test(text)).map(([, what]) => `contains ${what}`);
}

/**
 * What Windows refuses to a network-logon session, which an OpenSSH session
 * is (PowerShell/Win32-OpenSSH#2083, #2310; #518: "remote ssh sessions are
 * network logons"), each with where that is written down. A script kubemix
 * sends over SSH may use these only inside the worker it hands to the
 * local-SYSTEM path (Invoke-KubemixAsSystem, render/windows/system-task.ts).
 */
const REMOTE_REFUSED: readonly [RegExp, string][] = [
  [
    /\b(CreateUpdateDownloader|CreateUpdateInstaller|AcceptEula|CopyFromCache|CopyToCache|BeginSearch|EndSearch|RegisterServiceWithAU|UnregisterServiceWithAU|EnableService)\b/,
    'a Windows Update Agent call refused to remote callers (E_ACCESSDENIED; learn.microsoft.com "Using WUA From a Remote Computer")',
  ],
  [
    /\b(CreateUpdateSearcher|QueryHistory|GetTotalHistoryCount)\b|Microsoft\.Update\.(Session|Searcher|SystemInfo|AutoUpdate|ServiceManager|Installer|Downloader)\b/i,
    'the Windows Update Agent API, whose search and history Windows Server 2025 refuses over SSH (mgajda83/PSWindowsUpdate#60, #65) and whose download, install and EULA every build refuses ("Using WUA From a Remote Computer")',
  ],
  [
    /ConvertFrom-SecureString(?![^\n]*-(Secure)?Key\b)|ConvertTo-SecureString(?![^\n]*-(AsPlainText|Key|SecureKey)\b)/i,
    "a SecureString protected with the user's DPAPI key, which a key-authenticated session cannot unlock (PowerShell/Win32-OpenSSH#1950, #996)",
  ],
  [
    /ProtectedData\]::(Protect|Unprotect)\([^\n]*CurrentUser|\bcmdkey(\.exe)?\b|Get-StoredCredential|(Import|Export)-Clixml/i,
    "the user's DPAPI store or Credential Manager, locked without the user's password (PowerShell/Win32-OpenSSH#1950, #996, #452)",
  ],
  [
    /\\\\[A-Za-z0-9][A-Za-z0-9.-]*\\[^\\\s'"]+|\bnet(\.exe)?\s+use\b/i,
    "a network share opened with the session's credentials, which a network logon does not have (PowerShell/Win32-OpenSSH#518)",
  ],
];

/** The here-strings handed to Invoke-KubemixAsSystem -Script: what runs as SYSTEM, not in the session. */
function systemWorkers(tree: Parser.Tree): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  walk(tree.rootNode, (n) => {
    if (n.type !== 'command' || n.childForFieldName('command_name')?.text.toLowerCase() !== 'invoke-kubemixassystem')
      return;
    const elements = (n.childForFieldName('command_elements')?.namedChildren ?? []).filter((e) => e.text.trim() !== '');
    elements.forEach((e, i) => {
      const value = elements[i + 1];
      if (e.type === 'command_parameter' && e.text.toLowerCase() === '-script' && value?.text.startsWith("@'"))
        out.push({ start: value.startIndex, end: value.endIndex });
    });
  });
  return out;
}

/**
 * The remote-session rule: an API Windows refuses to network-logon sessions
 * outside the worker handed to the local-SYSTEM path fails; so does a script
 * that hands a worker to an Invoke-KubemixAsSystem whose definition does not
 * run it as SYSTEM through a scheduled task it starts.
 */
export function remoteSessionProblems(script: string): string[] {
  const tree = parse(script);
  const workers = systemWorkers(tree);
  // Character offsets: tree-sitter gives byte offsets; scripts kubemix renders are ASCII.
  const outside = [...script]
    .map((_, i) => (workers.some((w) => i >= w.start && i < w.end) ? ' ' : script[i]))
    .join('');
  const problems = REMOTE_REFUSED.filter(([re]) => re.test(outside)).map(
    ([re, what]) =>
      `${re.exec(outside)?.[0] ?? ''}: ${what}; run it through Invoke-KubemixAsSystem (a SYSTEM scheduled task)`,
  );
  if (workers.length > 0) {
    let definition = '';
    walk(tree.rootNode, (n) => {
      if (n.type === 'function_statement' && /^function Invoke-KubemixAsSystem\b/i.test(n.text)) definition = n.text;
    });
    const asSystem =
      /New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount/.test(definition) &&
      /Register-ScheduledTask\b/.test(definition) &&
      /Start-ScheduledTask\b/.test(definition);
    if (!asSystem)
      problems.push(
        'Invoke-KubemixAsSystem is not defined here as a scheduled task run by SYSTEM, so its worker runs in the session',
      );
  }
  return problems;
}

/** kubemix's PowerShell rules; empty when the script passes. */
export function lintPowerShell(script: string): string[] {
  const problems: string[] = [];
  const first = script.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (first?.trim() !== "$ErrorActionPreference = 'Stop'")
    problems.push(`first statement is not $ErrorActionPreference = 'Stop' (${first ?? ''})`);
  const names = commandNames(script);
  if (names.some((n) => n === 'invoke-expression' || n === 'iex')) problems.push('uses Invoke-Expression');
  if (names.includes('sc')) problems.push('calls sc (Set-Content in PowerShell): use sc.exe or New-Service');
  for (const [re, what] of FORBIDDEN) if (re.test(script)) problems.push(what);
  problems.push(...secretProblems(script));
  problems.push(...remoteSessionProblems(script));
  // PowerShell rejects "$name:" in a double-quoted string; the grammar accepts it.
  for (const s of doubleQuoted(script)) {
    const m = /\$[A-Za-z_][A-Za-z0-9_]*:(?![A-Za-z_{])/.exec(s);
    if (m !== null) problems.push(`${m[0]} in ${s} is not a valid variable reference`);
  }
  return problems;
}

/** One `if (cond) { return 'x' }` of a decision function, or its final `return 'x'` (cond undefined). */
export interface DecisionBranch {
  readonly condition?: string;
  readonly returns: string;
}

/**
 * The branches of a PowerShell decision function, in order, as the grammar
 * sees them: each top-level statement must be an `if` whose block only
 * returns a string, or a final bare `return`. Anything else is reported.
 */
export function decisionBranches(script: string, name: string): DecisionBranch[] {
  let fn: SyntaxNode | undefined;
  walk(parse(script).rootNode, (n) => {
    if (n.type === 'function_statement' && n.children.some((c) => c.type === 'function_name' && c.text === name))
      fn = n;
  });
  if (fn === undefined) throw new Error(`no function ${name}`);
  const body = fn.descendantsOfType('script_block_body')[0]?.namedChildren[0];
  if (body?.type !== 'statement_list') throw new Error(`${name} has no statement list`);
  const returned = (n: SyntaxNode): string => {
    const m = /^return '([^']*)'$/.exec(n.text.trim());
    if (n.type !== 'flow_control_statement' || m === null)
      throw new Error(`${name}: ${n.text} is not a return of a literal`);
    return m[1] ?? '';
  };
  return body.namedChildren
    .filter((s) => s.type !== 'comment')
    .map((s) => {
      if (s.type === 'flow_control_statement') return { returns: returned(s) };
      if (
        s.type !== 'if_statement' ||
        s.namedChildren.some((c) => c.type === 'elseif_clauses' || c.type === 'else_clause')
      )
        throw new Error(`${name}: unexpected ${s.type}: ${s.text}`);
      const cond = s.namedChildren.find((c) => c.type === 'pipeline');
      const block = s.namedChildren
        .find((c) => c.type === 'statement_block')
        ?.namedChildren.find((c) => c.type === 'statement_list');
      const only = block?.namedChildren;
      if (cond === undefined || only?.length !== 1 || only[0] === undefined)
        throw new Error(`${name}: ${s.text} is not if (…) { return '…' }`);
      return { condition: cond.text, returns: returned(only[0]) };
    });
}

/** Every node of a type, with its text (e.g. flow_control_statement for throw/exit). */
export function nodesOfType(script: string, type: string): string[] {
  return parse(script)
    .rootNode.descendantsOfType(type)
    .map((n) => n.text);
}

/**
 * The files a script dot-sources (`. 'C:\path'`), by their literal paths; a
 * dot-source of anything but one single-quoted literal is returned as
 * `?<its text>`, which no file matches.
 */
export function dotSourcedFiles(script: string): string[] {
  const out: string[] = [];
  walk(parse(script).rootNode, (n) => {
    if (n.type !== 'command' || n.children[0]?.type !== 'command_invokation_operator') return;
    if (n.children[0].text !== '.') return;
    const name = n.childForFieldName('command_name')?.text ?? '';
    const literal = /^'((?:[^']|'')*)'$/.exec(name);
    out.push(literal?.[1] === undefined ? `?${name}` : literal[1].replaceAll("''", "'"));
  });
  return out;
}

/**
 * kubemix helpers (`*-Kubemix*` commands, and the HNS type) a script calls
 * but neither defines nor dot-sources: `files` maps the remote paths of the
 * files on the script's host to their text. A dot-sourced file that is not
 * among them is reported as `file <path>`.
 */
export function undefinedHelpers(script: string, files: ReadonlyMap<string, string> = new Map()): string[] {
  const sources = [script];
  const missing: string[] = [];
  for (const path of dotSourcedFiles(script)) {
    const text = files.get(path);
    if (text === undefined) missing.push(`file ${path}`);
    else sources.push(text);
  }
  const defined = new Set(sources.flatMap((s) => nodesOfType(s, 'function_name')).map((n) => n.toLowerCase()));
  const called = nodesOfType(script, 'command_name').filter((n) => /-Kubemix/i.test(n));
  missing.push(...called.filter((n) => !defined.has(n.toLowerCase())));
  const hnsType = sources.some((s) => s.includes('public static class KubemixHns'));
  if (sources.some((s) => s.includes('[KubemixHns]::')) && !hnsType) missing.push('KubemixHns');
  return [...new Set(missing)];
}

/** What runs: the script with each dot-sourced file of `files` put in place of its dot-source. */
export function withDotSourcedInline(script: string, files: ReadonlyMap<string, string>): string {
  let out = script;
  for (const path of dotSourcedFiles(script)) {
    const text = files.get(path);
    if (text !== undefined) out = out.replace(`. '${path.replaceAll("'", "''")}'\n`, text);
  }
  return out;
}

/** The types of a script's top-level statements (and comments), in order. */
export function topLevelStatements(script: string): string[] {
  const list = parse(script).rootNode.namedChildren.find((n) => n.type === 'statement_list');
  const top = parse(script).rootNode.namedChildren.filter((n) => n.type === 'comment');
  return [...top, ...(list?.namedChildren ?? [])].sort((a, b) => a.startIndex - b.startIndex).map((n) => n.type);
}
