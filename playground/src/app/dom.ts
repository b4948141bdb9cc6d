/** A few lines of DOM building: the views make their elements with `el`, text always as text nodes (never parsed). */

type Child = Node | string | number | null | undefined | false;

/** `<tag attrs...>children</tag>`; attributes set with setAttribute, children appended as nodes or text. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | number | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'object' ? c : String(c));
  return e;
}

/** An element holding SVG markup made by a trusted drawing function (timelineSvg escapes all text it is given). */
export function svgBlock(markup: string, attrs: Record<string, string> = {}): HTMLDivElement {
  const d = el('div', attrs);
  d.innerHTML = markup;
  return d;
}

/** A number of microseconds as the views show it. */
export function us(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(3)} ms` : `${x.toFixed(2)} µs`;
}

/** A labelled select. */
export function select(label: string, options: readonly (string | number)[], value: string | number, onChange: (v: string) => void, id?: string): HTMLLabelElement {
  const s = el('select', { id });
  for (const o of options) s.append(el('option', { value: o, selected: String(o) === String(value) }, String(o)));
  s.addEventListener('change', () => onChange(s.value));
  return el('label', {}, label, s);
}
