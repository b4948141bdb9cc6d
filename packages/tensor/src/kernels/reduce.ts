/**
 * Reduction primitives over contiguous rows: `x` is read as `rows` rows of
 * `len` elements and each row reduces to one value. Reductions over other
 * dimensions first permute them to the end (see ops/reduce.ts).
 */
import type { TypedArray } from '../dtype.ts';

/** `out[r] = sum of row r`, accumulated in float64 (one rounding at the end for float32). */
export function sumRows(x: TypedArray, offset: number, rows: number, len: number, out: TypedArray): void {
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    const start = offset + r * len;
    for (let j = 0; j < len; j++) acc += x[start + j]!;
    out[r] = acc;
  }
}

/**
 * `out[r] = max of row r` and, when `argmax` is given, the position of its first
 * occurrence in the row. NaN wins, as in torch: a row holding NaN has max NaN.
 */
export function maxRows(
  x: TypedArray,
  offset: number,
  rows: number,
  len: number,
  out: TypedArray,
  argmax: Int32Array | null,
): void {
  for (let r = 0; r < rows; r++) {
    const start = offset + r * len;
    let best = -Infinity;
    let at = 0;
    for (let j = 0; j < len; j++) {
      const v = x[start + j]!;
      if (v > best || (v !== v && best === best)) {
        best = v;
        at = j;
      }
    }
    out[r] = best;
    if (argmax) argmax[r] = at;
  }
}
