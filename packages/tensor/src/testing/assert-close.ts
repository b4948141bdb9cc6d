/**
 * `assertClose`: elementwise comparison with a tolerance, failing with the
 * first element that differs: where, expected, actual, and by how much.
 */
import { fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import { Tensor } from '../tensor.ts';

/** Values `assertClose` compares: tensors, arrays, typed arrays or numbers. */
export type Comparable = Tensor | readonly number[] | Float32Array | Float64Array | number;

/** Tolerances of `assertClose`: `|actual - expected| <= atol + rtol * |expected|`. */
export interface CloseOptions {
  rtol?: number;
  atol?: number;
  /** What is being compared, printed first in the message ("rank 2 grad of fc1.weight"). */
  label?: string;
  /** Treat NaN as equal to NaN (default false, as in torch.testing). */
  equalNan?: boolean;
}

/** A parity failure: the first element out of tolerance and the worst difference. */
export class ParityError extends Error {
  override name = 'ParityError';
  constructor(
    message: string,
    /** Flat (row-major) index of the first element out of tolerance; -1 for a shape mismatch. */
    readonly index: number,
    /** The same position as a multi-dimensional index. */
    readonly position: number[],
    readonly expected: number,
    readonly actual: number,
    /** Largest |actual - expected| over all elements. */
    readonly maxAbsDiff: number,
    /** How many elements are out of tolerance. */
    readonly mismatches: number,
    readonly label: string | undefined,
  ) {
    super(message);
  }
}

function toFlat(x: Comparable): { values: ArrayLike<number>; shape: readonly number[] } {
  if (x instanceof Tensor) return { values: x.data(), shape: x.shape };
  if (typeof x === 'number') return { values: [x], shape: [] };
  return { values: x, shape: [x.length] };
}

function unravel(index: number, shape: readonly number[]): number[] {
  const pos = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    pos[d] = index % shape[d]!;
    index = Math.floor(index / shape[d]!);
  }
  return pos;
}

/**
 * Throws a `ParityError` unless every element of `actual` is within
 * `atol + rtol * |expected|` of `expected` (defaults rtol 1e-5, atol 1e-8, as
 * torch.allclose). Tensor shapes must match; a flat array matches any tensor
 * of the same element count.
 */
export function assertClose(actual: Comparable, expected: Comparable, opts: CloseOptions = {}): void {
  const { rtol = 1e-5, atol = 1e-8, label, equalNan = false } = opts;
  const a = toFlat(actual);
  const e = toFlat(expected);
  const prefix = label ? `${label}: ` : '';
  const bothTensors = actual instanceof Tensor && expected instanceof Tensor;
  if ((bothTensors && !sameShape(a.shape, e.shape)) || a.values.length !== e.values.length) {
    throw new ParityError(
      `${prefix}shape mismatch: expected ${fmtShape(e.shape)} (${e.values.length} elements), actual ${fmtShape(a.shape)} (${a.values.length} elements)`,
      -1, [], NaN, NaN, Infinity, Math.max(a.values.length, e.values.length), label,
    );
  }
  let first = -1;
  let mismatches = 0;
  let maxAbsDiff = 0;
  for (let i = 0; i < e.values.length; i++) {
    const x = a.values[i]!;
    const y = e.values[i]!;
    // Equal values (infinities included) differ by 0, not by Inf - Inf = NaN.
    const diff = x === y ? 0 : Math.abs(x - y);
    const bothNan = x !== x && y !== y;
    // An infinite expected value makes rtol·|expected| infinite: it matches only itself.
    const ok = (equalNan && bothNan) || x === y || (Number.isFinite(y) && diff <= atol + rtol * Math.abs(y));
    if (!(bothNan && equalNan) && (diff > maxAbsDiff || diff !== diff)) maxAbsDiff = diff !== diff ? NaN : Math.max(maxAbsDiff, diff);
    if (!ok) {
      mismatches++;
      if (first < 0) first = i;
    }
  }
  if (first < 0) return;
  const shape = a.shape.length ? a.shape : e.shape;
  const position = unravel(first, shape);
  const x = a.values[first]!;
  const y = e.values[first]!;
  throw new ParityError(
    `${prefix}${mismatches} of ${e.values.length} elements differ (rtol=${rtol}, atol=${atol}); ` +
      `first at index [${position.join(',')}]${shape.length > 1 ? ` (flat ${first})` : ''}: expected ${y}, actual ${x}, ` +
      `|diff| ${Math.abs(x - y)}; max |diff| ${maxAbsDiff}`,
    first, position, y, x, maxAbsDiff, mismatches, label,
  );
}
