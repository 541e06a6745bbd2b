// ESLint rules that keep values out of scripts except through an escaper
// (src/util/escape):
//   kubemix/shell-code     `shellCode(x)` takes a literal only: it names script text as
//                          code, so anything computed (a value) must go through the
//                          `shell` tagged template, which escapes it for where it lands
//   kubemix/no-hand-quote  in the folders named (options), an untagged template literal
//                          that wraps an interpolation in quotes by hand ('${x}', "${x}")
//                          unless the expression is a call of an escaper named in the
//                          options: the quote a value can close (the root shell injection
//                          of issue #31 was `curl … '${url}'`)
import { join, relative } from 'node:path';

const isConstantText = (node) =>
  (node.type === 'Literal' && typeof node.value === 'string') ||
  (node.type === 'TemplateLiteral' && node.expressions.length === 0);

const shellCode = {
  meta: {
    type: 'problem',
    docs: { description: 'shellCode() names constant script text: a literal, never a computed value' },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        if (node.callee.type !== 'Identifier' || node.callee.name !== 'shellCode') return;
        const arg = node.arguments[0];
        if (arg !== undefined && isConstantText(arg)) return;
        context.report({
          node,
          message:
            'shellCode() takes a string literal only; build script text around values with the shell`…` tagged template, which escapes each one for where it lands.',
        });
      },
    };
  },
};

/** The function a call expression calls, by its last name (`escape.shellQuote` → shellQuote). */
function calleeName(node) {
  if (node.type !== 'CallExpression') return undefined;
  if (node.callee.type === 'Identifier') return node.callee.name;
  if (node.callee.type === 'MemberExpression' && node.callee.property.type === 'Identifier')
    return node.callee.property.name;
  return undefined;
}

const noHandQuote = {
  meta: {
    type: 'problem',
    docs: { description: 'no quotes built by hand around an interpolated value in script or config text' },
    schema: [
      {
        type: 'object',
        properties: {
          folders: { type: 'array', items: { type: 'string' } },
          escapers: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { folders = [], escapers = [] } = context.options[0] ?? {};
    const rel = relative(join(context.cwd, 'src'), context.filename);
    if (rel.startsWith('..') || rel.endsWith('.test.ts')) return {};
    if (!folders.some((f) => rel === f || rel.startsWith(`${f}/`))) return {};
    return {
      TemplateLiteral(node) {
        if (node.parent?.type === 'TaggedTemplateExpression') return;
        node.expressions.forEach((expr, i) => {
          const before = node.quasis[i]?.value.cooked ?? '';
          const after = node.quasis[i + 1]?.value.cooked ?? '';
          const quote = before.at(-1);
          if ((quote !== "'" && quote !== '"') || !after.startsWith(quote)) return;
          if (escapers.includes(calleeName(expr))) return;
          context.report({
            node: expr,
            message: `a value wrapped in ${quote}…${quote} by hand: a ${quote} in it ends the quote. Build the text with the shell\`…\` tagged template, or call the escaper of the format (${escapers.join(', ')}).`,
          });
        });
      },
    };
  },
};

export default { meta: { name: 'kubemix-quoting' }, rules: { 'shell-code': shellCode, 'no-hand-quote': noHandQuote } };
