// ESLint rules on the repository's own import graph (relative imports of .ts
// files, `import type` included: a type-only cycle still ties the files'
// meanings together):
//   kubemix/no-cycle      a file that is part of an import cycle
//   kubemix/layering      an import the architecture forbids (options: zones)
//   kubemix/resolved-model  in the folders named (options), a read of `.spec` or a
//                         comparison of `.backend`: those folders read the resolved model
//                         (model.overlay, model.podNetworks, model.proxy, …), never the raw spec
// `./x.js` in an import names the compiled file; it is read as ./x.ts, as tsc does.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The .ts file a relative import specifier names, if it exists. */
function target(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Relative imports of a file: every import, export … from and import() with a literal. */
function importsOf(file) {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((f) => target(file, f.fileName))
    .filter((t) => t !== undefined);
}

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist' && !entry.name.startsWith('.')) walk(path, out);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Files in import cycles (Tarjan's strongly connected components of 2+ files), by file: its component. */
function cyclesUnder(root) {
  const edges = new Map(walk(root).map((f) => [f, importsOf(f)]));
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const inCycle = new Map();
  let next = 0;
  const strong = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    for (let w = stack.pop(); ; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) for (const f of component) inCycle.set(f, new Set(component));
  };
  for (const f of edges.keys()) if (!index.has(f)) strong(f);
  return inCycle;
}

const graphs = new Map();

/** Import declarations, re-exports and literal dynamic imports of the linted file, with their targets. */
function eachImport(context, report) {
  const check = (node) => {
    const specifier = node.source?.value;
    if (typeof specifier !== 'string') return;
    const to = target(context.filename, specifier);
    if (to !== undefined) report(node, to);
  };
  return {
    ImportDeclaration: check,
    ExportNamedDeclaration: check,
    ExportAllDeclaration: check,
    ImportExpression: check,
  };
}

const noCycle = {
  meta: { type: 'problem', docs: { description: 'no file may be part of an import cycle' }, schema: [] },
  create(context) {
    const root = context.cwd;
    if (!graphs.has(root)) graphs.set(root, cyclesUnder(root));
    const component = graphs.get(root).get(context.filename);
    if (component === undefined) return {};
    const names = [...component]
      .map((f) => relative(root, f))
      .sort()
      .join(', ');
    return eachImport(context, (node, to) => {
      if (component.has(to))
        context.report({
          node,
          message: `import cycle: ${relative(root, context.filename)} imports ${relative(root, to)}, which leads back here (cycle: ${names}). Move what both need into a third file.`,
        });
    });
  },
};

const layering = {
  meta: {
    type: 'problem',
    docs: { description: 'imports between src/ folders that the architecture forbids' },
    schema: [
      {
        type: 'array',
        items: {
          type: 'object',
          properties: { from: { type: 'string' }, to: { type: 'string' }, why: { type: 'string' } },
          required: ['from', 'to', 'why'],
          additionalProperties: false,
        },
      },
    ],
  },
  create(context) {
    const src = join(context.cwd, 'src');
    const folderOf = (file) => {
      const rel = relative(src, file);
      return rel.startsWith('..') ? undefined : rel.split('/')[0];
    };
    const from = folderOf(context.filename);
    const zones = (context.options[0] ?? []).filter((z) => z.from === from);
    if (zones.length === 0) return {};
    return eachImport(context, (node, to) => {
      const zone = zones.find((z) => z.to === folderOf(to));
      if (zone !== undefined)
        context.report({
          node,
          message: `src/${zone.from}/ never imports src/${zone.to}/ (${relative(context.cwd, to)}): ${zone.why}.`,
        });
    });
  },
};

/** The name a member access or a destructured key uses, when it is a plain name or a string literal. */
function keyName(key, computed) {
  if (!computed && key.type === 'Identifier') return key.name;
  return key.type === 'Literal' && typeof key.value === 'string' ? key.value : undefined;
}

const isBackend = (node) => node?.type === 'MemberExpression' && keyName(node.property, node.computed) === 'backend';

const resolvedModel = {
  meta: {
    type: 'problem',
    docs: { description: 'folders that must read the resolved model, not the raw spec or backend names' },
    schema: [{ type: 'array', items: { type: 'string' } }],
  },
  create(context) {
    const rel = relative(join(context.cwd, 'src'), context.filename);
    const folder = rel.startsWith('..') ? undefined : rel.split('/')[0];
    if (!(context.options[0] ?? []).includes(folder)) return {};
    const spec = (node) =>
      context.report({
        node,
        message: `src/${folder}/ reads the resolved model, not the raw spec (\`.spec\`): add the fact to src/model/ (resolveModel) and read it there.`,
      });
    const backend = (node) =>
      context.report({
        node,
        message: `src/${folder}/ does not compare CNI backend names: ask the model (\`model.overlay.vxlan !== undefined\`, or vxlanOf() for a plan's header).`,
      });
    return {
      MemberExpression(node) {
        if (keyName(node.property, node.computed) === 'spec') spec(node);
      },
      'ObjectPattern > Property'(node) {
        if (keyName(node.key, node.computed) === 'spec') spec(node);
      },
      BinaryExpression(node) {
        if (['===', '!==', '==', '!='].includes(node.operator) && (isBackend(node.left) || isBackend(node.right)))
          backend(node);
      },
      SwitchStatement(node) {
        if (isBackend(node.discriminant)) backend(node);
      },
    };
  },
};

export default { meta: { name: 'kubemix' }, rules: { 'no-cycle': noCycle, layering, 'resolved-model': resolvedModel } };
