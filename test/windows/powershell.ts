// Static checks for rendered PowerShell: a real grammar (tree-sitter-powershell)
// plus kubemix's own rules. Forbidden texts are assembled from pieces so that
// no source file in the repository contains them whole.
import Parser from 'tree-sitter';

type SyntaxNode = Parser.SyntaxNode;

// The grammar's Node binding is an ES module with top-level await: import it, don't require it.
const grammar = ((await import('tree-sitter-powershell/bindings/node/index.js')) as { default: Parser.Language }).default;
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
    if (n.type === 'ERROR' || n.isMissing) out.push(`${n.startPosition.row + 1}:${n.startPosition.column + 1}: ${n.isMissing ? `missing ${n.type}` : JSON.stringify(n.text.slice(0, 60))}`);
  });
  return out;
}

function commandNames(script: string): string[] {
  const names: string[] = [];
  walk(parse(script).rootNode, (n) => { if (n.type === 'command_name') names.push(n.text.toLowerCase()); });
  return names;
}

function doubleQuoted(script: string): string[] {
  const out: string[] = [];
  walk(parse(script).rootNode, (n) => { if (n.type === 'expandable_string_literal') out.push(n.text); });
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
  [/sha256:[0-9a-f]{64}/, 'a CA certificate hash'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  // publicKeyToken: the public identity of a Windows component in an answer file, not a credential.
  [/(?<!publicKey)(token|password)[ \t]*[:=][ \t]*['"]?(?!\{\{secret:)[A-Za-z0-9+/._-]{8,}/i, 'a credential not taken from the secret store'],
];

/** Secrets appear only as {{secret:NAME}} references. */
export function secretProblems(text: string): string[] {
  return SECRETS.filter(([re]) => re.test(text)).map(([, what]) => `contains ${what}`);
}

/** kubemix's PowerShell rules; empty when the script passes. */
export function lintPowerShell(script: string): string[] {
  const problems: string[] = [];
  const first = script.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (first?.trim() !== "$ErrorActionPreference = 'Stop'") problems.push(`first statement is not $ErrorActionPreference = 'Stop' (${first ?? ''})`);
  const names = commandNames(script);
  if (names.some((n) => n === 'invoke-expression' || n === 'iex')) problems.push('uses Invoke-Expression');
  if (names.includes('sc')) problems.push('calls sc (Set-Content in PowerShell): use sc.exe or New-Service');
  for (const [re, what] of FORBIDDEN) if (re.test(script)) problems.push(what);
  problems.push(...secretProblems(script));
  // PowerShell rejects "$name:" in a double-quoted string; the grammar accepts it.
  for (const s of doubleQuoted(script)) {
    const m = /\$[A-Za-z_][A-Za-z0-9_]*:(?![A-Za-z_{])/.exec(s);
    if (m !== null) problems.push(`${m[0]} in ${s} is not a valid variable reference`);
  }
  return problems;
}
