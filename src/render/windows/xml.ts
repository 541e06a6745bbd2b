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
  return `<?xml version="1.0" encoding="utf-8"?>\n${renderElement(root, 0)}`;
}

function renderElement(e: XmlElement, depth: number): string {
  const pad = '  '.repeat(depth);
  const attrs = e.attrs.map(([k, v]) => ` ${k}="${xmlEscape(v)}"`).join('');
  if (typeof e.body === 'string') return `${pad}<${e.tag}${attrs}>${xmlEscape(e.body)}</${e.tag}>\n`;
  if (e.body.length === 0) return `${pad}<${e.tag}${attrs} />\n`;
  return `${pad}<${e.tag}${attrs}>\n${e.body.map((c) => renderElement(c, depth + 1)).join('')}${pad}</${e.tag}>\n`;
}
