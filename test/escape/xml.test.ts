// xmlEscape against fast-xml-parser: as an attribute and as text, every
// value comes back unchanged and the document has no other node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { xmlEscape } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

const NOT_XML = /[\u0001-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

test('xmlEscape: an XML parser reads every value back unchanged, as attribute and as text', () => {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    processEntities: true,
    htmlEntities: true,
    textNodeName: '#text',
  });
  for (const c of escapeAll(xmlEscape, (v) => unencodable(v) || NOT_XML.test(v), 1200)) {
    const doc = `<r a="${c.text}" b='${c.text}'><t>${c.text}</t><u/></r>`;
    assert.equal(XMLValidator.validate(doc), true, doc);
    const r = (parser.parse(doc) as { r: Record<string, unknown> }).r;
    const text = c.value === '' ? '' : (r['t'] as string | number);
    assert.deepEqual({ ...r, t: text }, { '@a': c.value, '@b': c.value, t: c.value, u: '' }, doc);
  }
});
