/**
 * Just enough XML to write a JUnit report: elements with attributes and
 * text, escaped. Text from a submission (check messages quote rank errors)
 * goes through `printable` first, so no control character reaches a CI
 * page, and whatever XML 1.0 cannot hold at all (lone surrogates, U+FFFE,
 * U+FFFF) is shown as an escape too: an XML parser would reject the whole
 * report for one such character.
 */
import { printable } from '../text.ts';

/** An element: a name, attributes (undefined ones left out), children or text. */
export interface XmlElement {
  name: string;
  attrs?: Record<string, string | number | undefined>;
  children?: XmlElement[];
  text?: string;
}

// Characters XML 1.0 cannot represent, not even as references (printable() already escaped the C0 and C1 controls).
const NOT_XML = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[\ufffe\uffff]/g;

/** `s` made safe for XML text: printable (newlines kept), then what XML cannot hold escaped. */
export function xmlSafe(s: string): string {
  return printable(s, true).replace(NOT_XML, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}

/** Escapes text content. */
export function escapeText(s: string): string {
  return xmlSafe(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes an attribute value (double-quoted); a newline is kept as a reference, which parsers do not fold into a space. */
export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
}

/** The XML text of `root`, indented, with the XML declaration. */
export function renderXml(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const visit = (e: XmlElement, depth: number) => {
    const pad = '  '.repeat(depth);
    const attrs = Object.entries(e.attrs ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => ` ${k}="${escapeAttr(String(v))}"`)
      .join('');
    if (e.text !== undefined) out.push(`${pad}<${e.name}${attrs}>${escapeText(e.text)}</${e.name}>`);
    else if (!e.children?.length) out.push(`${pad}<${e.name}${attrs}/>`);
    else {
      out.push(`${pad}<${e.name}${attrs}>`);
      for (const c of e.children) visit(c, depth + 1);
      out.push(`${pad}</${e.name}>`);
    }
  };
  visit(root, 0);
  return out.join('\n') + '\n';
}
