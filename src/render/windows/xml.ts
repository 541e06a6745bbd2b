// A minimal XML writer for the answer file: elements, attributes and escaped
// text, indented two spaces. Deterministic by construction (no maps, no
// attribute sorting surprises: attributes come out in the order given).

export interface XmlElement {
  readonly tag: string;
  readonly attrs: readonly (readonly [string, string])[];
  /** Text content, or child elements. */
  readonly body: string | readonly XmlElement[];
}

export function el(
  tag: string,
  body: string | readonly XmlElement[] = [],
  attrs: readonly (readonly [string, string])[] = [],
): XmlElement {
  return { tag, attrs, body };
}

import { xmlEscape } from '../../util/escape/index.js';

export { xmlEscape };

export function renderXml(root: XmlElement): string {
  const out = ['<?xml version="1.0" encoding="utf-8"?>\n'];
  renderElement(root, 0, out);
  return out.join('');
}

/**
 * Subtrees a caller marks as shared (`sharedElement`: the same element object
 * in every node's answer file, most of the file), written once per depth and
 * reused as text afterwards.
 */
const SHARED = new WeakMap<XmlElement, Map<number, string>>();

/** Marks `e` as a subtree many documents hold unchanged (it must not be changed after). */
export function sharedElement(e: XmlElement): XmlElement {
  SHARED.set(e, new Map());
  return e;
}

/** Appends `e`'s lines to `out`: one join at the end, not one per level (each level used to copy its subtree). */
function renderElement(e: XmlElement, depth: number, out: string[]): void {
  const texts = SHARED.get(e);
  if (texts !== undefined) {
    let text = texts.get(depth);
    if (text === undefined) {
      const own: string[] = [];
      renderOwn(e, depth, own);
      texts.set(depth, (text = own.join('')));
    }
    out.push(text);
    return;
  }
  renderOwn(e, depth, out);
}

function renderOwn(e: XmlElement, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  let attrs = '';
  for (const [k, v] of e.attrs) attrs += ` ${k}="${xmlEscape(v)}"`;
  if (typeof e.body === 'string') out.push(`${pad}<${e.tag}${attrs}>${xmlEscape(e.body)}</${e.tag}>\n`);
  else if (e.body.length === 0) out.push(`${pad}<${e.tag}${attrs} />\n`);
  else {
    out.push(`${pad}<${e.tag}${attrs}>\n`);
    for (const c of e.body) renderElement(c, depth + 1, out);
    out.push(`${pad}</${e.tag}>\n`);
  }
}
