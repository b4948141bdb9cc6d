/**
 * JSON the way this repository writes it by hand: two-space indentation,
 * objects one key a line, arrays of plain values on one line when the line
 * stays short enough to read, else one value a line. Rewriting turbo.json or
 * a package.json this way changes only what the kit changed.
 */

const MAX_LINE = 160;

function inline(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

/** `value` as JSON text, with a final newline. */
export function formatJson(value: unknown): string {
  // `lead` is what precedes the value on its line (indentation and key), to judge the line's length.
  const out = (v: unknown, indent: string, lead = 0): string => {
    if (inline(v)) return JSON.stringify(v);
    const next = indent + '  ';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      const flat = `[${v.map((x) => JSON.stringify(x)).join(', ')}]`;
      if (v.every(inline) && lead + flat.length + 1 <= MAX_LINE) return flat;
      return `[\n${v.map((x) => next + out(x, next)).join(',\n')}\n${indent}]`;
    }
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, x]) => `${next}${JSON.stringify(k)}: ${out(x, next, next.length + JSON.stringify(k).length + 2)}`).join(',\n')}\n${indent}}`;
  };
  return out(value, '') + '\n';
}
