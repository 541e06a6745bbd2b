// psQuote against tree-sitter-powershell: `$x = <quoted>; $y = 1` parses
// without errors, the quoted word is one verbatim string token, and undoing
// the doubling of PowerShell's five single-quote characters gives the value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Parser from 'tree-sitter';
import { psQuote } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

// The grammar's Node binding is an ES module with top-level await: import it, don't require it.
const PowerShell = ((await import('tree-sitter-powershell/bindings/node/index.js')) as { default: Parser.Language })
  .default;

const QUOTES = "'\u2018\u2019\u201a\u201b";

/** The PowerShell tokenizer's reading of a verbatim string: a doubled quote is its second character. */
function decode(token: string): string {
  const body = [...token.slice(1, -1)];
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] ?? '';
    if (QUOTES.includes(c)) {
      assert.ok(QUOTES.includes(body[i + 1] ?? ''), `an undoubled quote ends the string early: ${token}`);
      i++;
      out += body[i];
    } else out += c;
  }
  return out;
}

test('psQuote: doubles every PowerShell single-quote character, U+2018–U+201B included', () => {
  assert.equal(psQuote('b\u2019; calc; \u2019'), "'b\u2019\u2019; calc; \u2019\u2019'");
  assert.equal(psQuote("it's"), "'it''s'");
});

test('psQuote: tree-sitter-powershell reads every value as one string, unchanged', () => {
  const parser = new Parser();
  parser.setLanguage(PowerShell);
  for (const c of escapeAll(psQuote, unencodable)) {
    const tree = parser.parse(`$x = ${c.text}\n$y = 1\n`);
    assert.equal(tree.rootNode.hasError, false, c.text);
    const strings = tree.rootNode.descendantsOfType('verbatim_string_characters');
    assert.equal(strings.length, 1, c.text);
    assert.equal(strings[0]?.text, c.text);
    assert.equal(decode(c.text), c.value);
    // Every quote character inside comes doubled, so no PowerShell (whose
    // tokenizer, unlike this grammar, ends strings on U+2018–U+201B too) can end it early.
    assert.equal(tree.rootNode.descendantsOfType('assignment_expression').length, 2, c.text);
  }
});
