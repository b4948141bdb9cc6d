/**
 * Plain-text tables for terminal output, written as Markdown (headers, a
 * rule that right-aligns every column, right-aligned cells) so that the
 * same text reads well in a terminal and in notes/experiments.md.
 */

/** A Markdown table of `rows` (already formatted cells) under `headers`. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(4, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[], pad: (s: string, w: number) => string) => `| ${cells.map((c, i) => pad(c ?? '', widths[i]!)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w - 1) + ':').join(' | ')} |`;
  return [line(headers, (s, w) => s.padEnd(w)), rule, ...rows.map((r) => line(r, (s, w) => s.padStart(w)))].join('\n');
}
