/**
 * Numeric answers: reading what a student typed ("12.5", "12.5 GB",
 * "1.25e4 MB", "3/4"), converting it to the unit the question asks for, and
 * comparing it with the computed answer under the question's stated
 * tolerance. Anything that is not a number in an acceptable unit is
 * *malformed*: it is not graded and costs no attempt, and the reason says
 * what to type instead.
 */
import { convert, describeDimension, findUnit, unitOf, unitsOf, type UnitSymbol } from './units.ts';

/**
 * How close an answer must be: |answer - expected| <= max(absolute,
 * relative * |expected|). `{ absolute: 0 }` asks for the exact value (whole
 * numbers of ranks, steps, bytes).
 */
export interface Tolerance {
  relative?: number;
  absolute?: number;
}

/** What a numeric question accepts. */
export interface NumericFormat {
  /** The unit the answer is in; null for a plain number (a count, a ratio). */
  unit: UnitSymbol | null;
  tolerance: Tolerance;
  /** Words that may follow a plain number ("ranks", "messages"); "x" and "×" always may. */
  countWords?: readonly string[];
}

/** The outcome of reading an answer. */
export type ParsedAnswer =
  | { ok: true; /** In the question's unit. */ value: number; /** The unit the student wrote, if it differs from the question's. */ convertedFrom?: string }
  | { ok: false; reason: string };

const NUMBER = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`;
const ANSWER = new RegExp(String.raw`^(${NUMBER})(?:\s*/\s*(${NUMBER}))?\s*(.*)$`);

/** What the question expects, in words: "a number in GB", "a plain number". */
export function describeFormat(f: NumericFormat): string {
  return f.unit === null ? 'a plain number' : `a number in ${f.unit}`;
}

/** The tolerance in words: "within 1%", "exactly", "within ±0.5 GB". */
export function describeTolerance(f: NumericFormat): string {
  const { relative = 0, absolute = 0 } = f.tolerance;
  if (relative === 0 && absolute === 0) return 'exactly';
  const parts: string[] = [];
  if (relative > 0) parts.push(`within ${formatNumber(relative * 100)}%`);
  if (absolute > 0) parts.push(`within ±${formatNumber(absolute)}${f.unit ? ` ${f.unit}` : ''}`);
  return parts.join(' or ');
}

/** Reads `text` as an answer in format `f`. */
export function parseNumericAnswer(text: string, f: NumericFormat): ParsedAnswer {
  const t = text.trim().replace(/^[~≈]\s*/, '');
  const expect = f.unit === null ? 'a plain number' : `a number in ${f.unit}, such as 12.5 or 12.5 ${f.unit}`;
  if (t === '') return { ok: false, reason: `no answer: type ${expect}` };
  if (/\d,\d/.test(t)) return { ok: false, reason: `'${t}' has a comma: write decimals with a point (12.5) and no thousands separators (12500 or 1.25e4)` };
  const m = ANSWER.exec(t);
  if (!m) return { ok: false, reason: `'${t}' is not a number: type ${expect}` };
  const num = Number(m[1]);
  const den = m[2] === undefined ? 1 : Number(m[2]);
  if (den === 0) return { ok: false, reason: `'${t}' divides by zero` };
  const value = num / den;
  if (!Number.isFinite(value)) return { ok: false, reason: `'${t}' is not a finite number` };
  const suffix = m[3]!.trim();
  if (f.unit === null) {
    if (suffix === '' || suffix === 'x' || suffix === '×' || (f.countWords ?? []).includes(suffix)) return { ok: true, value };
    const u = findUnit(suffix);
    return { ok: false, reason: u ? `this asks for a plain number, not ${describeDimension(u.dimension)} in ${u.symbol}: type just the number` : `'${suffix}' is not understood here: type just the number` };
  }
  const want = unitOf(f.unit);
  if (suffix === '') return { ok: true, value };
  const u = findUnit(suffix);
  if (!u) return { ok: false, reason: `unknown unit '${suffix}': this asks for ${want.symbol} (also accepted: ${unitsOf(want.dimension).join(', ')})` };
  if (u.dimension !== want.dimension) return { ok: false, reason: `'${t}' is ${describeDimension(u.dimension)}, but this asks for ${describeDimension(want.dimension)} in ${want.symbol}` };
  return u === want ? { ok: true, value } : { ok: true, value: convert(value, u, want), convertedFrom: u.symbol };
}

/** Whether `value` is within `tol` of `expected`. */
export function withinTolerance(value: number, expected: number, tol: Tolerance): boolean {
  const bound = Math.max(tol.absolute ?? 0, (tol.relative ?? 0) * Math.abs(expected));
  // A relative rounding slack of 1e-12, so that an exact answer typed with all its digits is never refused by floating point.
  return Math.abs(value - expected) <= bound + 1e-12 * Math.max(1, Math.abs(expected));
}

/**
 * A number as a person writes it: integers in full (up to 1e15), others
 * with up to 6 significant digits and no trailing zeros, so that typing the
 * shown value back is always within any tolerance of 0.01% or more.
 */
export function formatNumber(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e15)) return x.toExponential(5).replace(/\.?0+e/, 'e');
  return String(Number(x.toPrecision(6)));
}

/** `value` with the question's unit: "12.5 GB", or "4" for a plain number. */
export function formatQuantity(value: number, f: NumericFormat): string {
  return f.unit === null ? formatNumber(value) : `${formatNumber(value)} ${f.unit}`;
}
