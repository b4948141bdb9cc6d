/**
 * Text that came from a submission, made safe to keep and to show.
 *
 * Bounds on every string that reaches a rubric, a report or an export from a
 * submission: check messages (they quote rank errors, which a submission
 * writes), notes (a crashed process's output), labels and values of a
 * divergence, the submission's name and path (folder names are a student's
 * choice). A string over its bound keeps its start and says how much was cut;
 * the rubric then carries the flag 'output-truncated'. The rubric schema
 * declares the same bounds (maxLength), so a rubric that breaks them is never
 * written.
 */

/** The most characters each kind of string may have. */
export const TEXT_LIMITS = Object.freeze({
  /** A check's message. */
  message: 4000,
  /** One note of a rubric. */
  note: 4000,
  /** A divergence's label, or an expected or actual value given as text. */
  value: 400,
  /** A check's or a submission's name or id. */
  name: 200,
  /** A path. */
  path: 1000,
});

/** `s` cut to at most `limit` characters, saying how many were cut; `cut` is set when it was. */
export function bounded(s: string, limit: number, cut?: { cut: boolean }): string {
  if (s.length <= limit) return s;
  if (cut) cut.cut = true;
  const tail = (dropped: number) => ` … [${dropped} more characters cut]`;
  // The tail's own length depends on the count it states; the longest count is s.length.
  const keep = Math.max(0, limit - tail(s.length).length);
  return s.slice(0, keep) + tail(s.length - keep);
}

/** Control characters, the Unicode line and paragraph separators, and the bidirectional-text controls (which reorder what a reader sees). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * `s` with every control character (and the Unicode line separators) shown
 * as an escape such as `\u{1b}`: a string from a submission printed to a
 * terminal can then neither move the cursor, recolour or retitle it, nor
 * print a line that looks like the grader's own, nor reverse what follows. Newlines are kept when
 * `keepNewlines` is set (a multi-line message printed line by line).
 */
export function printable(s: string, keepNewlines = false): string {
  return s.replace(CONTROL, (c) => (keepNewlines && c === '\n' ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`));
}

/**
 * JSON text of `value` for a file a person may print (`cat rubric.json`):
 * JSON.stringify escapes the C0 controls but leaves DEL, the C1 controls
 * (U+009B is a terminal's CSI) and the line separators raw; here they are
 * escaped too (still valid JSON, the same value when parsed).
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
}
