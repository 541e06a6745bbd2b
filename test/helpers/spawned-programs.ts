// A static scan for the programs the test suite and the code it runs on this
// machine start: spawn/spawnSync/execFile/execFileSync calls, the helpers that
// wrap them (a function whose parameter becomes the program, such as the
// harness's sh() and quiet(), followed through imports), programs started by a
// runner program (`ip netns exec NS prog`, `unshare -r prog`, `setpriv … prog`),
// and absolute executable paths written in test code (`/usr/sbin/sshd`).
// A spawn whose program is neither a literal nor a wrapper's parameter is
// reported as dynamic, so a new one cannot slip past unnoticed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export interface ProgramUse {
  readonly program: string;
  /** file:line relative to the repository root. */
  readonly where: string;
}

export interface ScanResult {
  readonly uses: readonly ProgramUse[];
  /** Spawns whose program the scan cannot name: file:line and the expression. */
  readonly dynamic: readonly ProgramUse[];
}

const SPAWNERS = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync']);
/** Programs that start the program named among their arguments. */
const RUNNERS = new Set(['unshare', 'setpriv', 'sudo', 'timeout', 'nsenter', 'env', 'chroot']);
const EXECUTABLE_PATH = /^\/(?:usr\/)?s?bin\/[\w.+-]+$/;

interface Wrapper {
  readonly programParam: number;
  readonly argsParam: number | undefined;
}

interface Parsed {
  readonly file: string;
  readonly source: ts.SourceFile;
  /** Local name → [module file, exported name] for relative named imports. */
  readonly imports: Map<string, readonly [string, string]>;
}

function walk(dir: string, skip: (path: string) => boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (skip(path)) continue;
    if (entry.isDirectory()) walk(path, skip, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT_FROM = /\bfrom '(\.[^']+)\.js'/g;

/**
 * Parsing every file is slow: only files that import node:child_process, test files
 * with an executable path, and files importing one of those (transitively) can start a program.
 */
function relevant(root: string, files: readonly string[]): { file: string; text: string }[] {
  const texts = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
  const chosen = new Set(files.filter((f) => /child_process|'\/(?:usr\/)?s?bin\//.test(texts.get(f)!)));
  for (let size = -1; size !== chosen.size;) {
    size = chosen.size;
    for (const [f, text] of texts) {
      if (chosen.has(f)) continue;
      for (const m of text.matchAll(IMPORT_FROM)) if (chosen.has(resolve(dirname(f), `${m[1]}.ts`))) chosen.add(f);
    }
  }
  return [...chosen].sort().map((file) => ({ file, text: texts.get(file)! }));
}

function parse({ file, text }: { file: string; text: string }): Parsed {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const imports = new Map<string, readonly [string, string]>();
  for (const st of source.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const spec = st.moduleSpecifier.text;
    const bindings = st.importClause?.namedBindings;
    if (!spec.startsWith('.') || bindings === undefined || !ts.isNamedImports(bindings)) continue;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    for (const el of bindings.elements) imports.set(el.name.text, [target, (el.propertyName ?? el.name).text]);
  }
  return { file, source, imports };
}

function calleeName(call: ts.CallExpression): string | undefined {
  const e = call.expression;
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
}

function enclosingFunction(node: ts.Node): ts.SignatureDeclaration | undefined {
  for (let n = node.parent; n !== undefined; n = n.parent) if (ts.isFunctionLike(n)) return n;
  return undefined;
}

function functionName(fn: ts.SignatureDeclaration): string | undefined {
  if ((ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)) && fn.name !== undefined && ts.isIdentifier(fn.name))
    return fn.name.text;
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

function paramIndex(fn: ts.SignatureDeclaration, e: ts.Expression | undefined): number | undefined {
  if (e === undefined || !ts.isIdentifier(e)) return undefined;
  const i = fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === e.text);
  return i < 0 ? undefined : i;
}

function literal(e: ts.Expression | undefined): string | undefined {
  return e !== undefined && (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) ? e.text : undefined;
}

/** The program a runner starts, from its literal arguments (options and their values skipped). */
function runnerTarget(program: string, args: ts.Expression | undefined): string | undefined {
  if (args === undefined || !ts.isArrayLiteralExpression(args)) return undefined;
  const words = args.elements.map(
    (el) => literal(el as ts.Expression) ?? (ts.isTemplateExpression(el) ? `${el.head.text}…` : undefined),
  );
  if (program === 'ip') return words[0] === 'netns' && words[1] === 'exec' ? words[3] : undefined;
  if (!RUNNERS.has(program)) return undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === undefined) continue;
    if (w.startsWith('-')) {
      // `-k 5`, `--propagation private`: an option's separate value is not the program.
      if (/^-(?:k|s|u|g)$|^--(?:propagation|user|group|signal|kill-after)$/.test(w)) i++;
      continue;
    }
    if (/^\d+(?:\.\d+)?[smhd]?$/.test(w) || w.includes('=')) continue;
    return w;
  }
  return undefined;
}

/** Every program started by the given files (repository-relative paths in the results). */
export function scanSpawnedPrograms(
  root: string,
  dirs: readonly string[],
  skip: (path: string) => boolean,
): ScanResult {
  const parsed = relevant(
    root,
    dirs.flatMap((d) => walk(join(root, d), skip)),
  ).map(parse);
  const wrappers = new Map<string, Wrapper>(); // `${file}#${name}`
  const wrapperOf = (p: Parsed, name: string): Wrapper | undefined => {
    const imported = p.imports.get(name);
    return imported === undefined ? wrappers.get(`${p.file}#${name}`) : wrappers.get(`${imported[0]}#${imported[1]}`);
  };
  let uses: ProgramUse[] = [];
  let dynamic: ProgramUse[] = [];
  // Wrappers of wrappers (quiet → sh → execFileSync) across files: repeat until nothing new is learnt.
  for (let known = -1; known !== wrappers.size;) {
    known = wrappers.size;
    uses = [];
    dynamic = [];
    for (const p of parsed) {
      const where = (n: ts.Node): string =>
        `${relative(root, p.file)}:${p.source.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node)) {
          const name = calleeName(node);
          const wrapper = name === undefined || !ts.isIdentifier(node.expression) ? undefined : wrapperOf(p, name);
          const spawner = name !== undefined && SPAWNERS.has(name);
          if (spawner || wrapper !== undefined) {
            const programArg = node.arguments[wrapper?.programParam ?? 0];
            const argsArg =
              wrapper === undefined
                ? node.arguments[1]
                : wrapper.argsParam === undefined
                  ? undefined
                  : node.arguments[wrapper.argsParam];
            const program = literal(programArg);
            const fn = enclosingFunction(node);
            const viaParam = fn === undefined ? undefined : paramIndex(fn, programArg);
            const fnName = fn === undefined ? undefined : functionName(fn);
            if (program !== undefined) {
              uses.push({ program, where: where(node) });
              const target = runnerTarget(program, argsArg);
              if (target !== undefined) uses.push({ program: target, where: where(node) });
            } else if (programArg !== undefined && programArg.getText() === 'process.execPath') {
              uses.push({ program: 'node', where: where(node) });
            } else if (fn !== undefined && viaParam !== undefined && fnName !== undefined) {
              wrappers.set(`${p.file}#${fnName}`, { programParam: viaParam, argsParam: paramIndex(fn, argsArg) });
            } else {
              dynamic.push({ program: programArg?.getText() ?? '(no argument)', where: where(node) });
            }
          }
        } else if (
          ts.isStringLiteral(node) &&
          EXECUTABLE_PATH.test(node.text) &&
          relative(root, p.file).startsWith('test')
        ) {
          uses.push({ program: node.text, where: where(node) });
        }
        ts.forEachChild(node, visit);
      };
      visit(p.source);
    }
  }
  return { uses, dynamic };
}
