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

/** The tolerances `assertClose` uses when given none: torch.allclose's. */
export const DEFAULT_TOLERANCE: Readonly<{ rtol: number; atol: number }> = Object.freeze({ rtol: 1e-5, atol: 1e-8 });

/** What a ParityError found: the shapes disagree, or some elements are out of tolerance. */
export type ParityFailure =
  | {
      kind: 'shape';
      label?: string | undefined;
      expectedShape: readonly number[];
      actualShape: readonly number[];
      /** Element counts, which differ when the shapes are flat arrays of different lengths. */
      expectedCount: number;
      actualCount: number;
    }
  | {
      kind: 'values';
      label?: string | undefined;
      /** Flat (row-major) index of the first element out of tolerance. */
      index: number;
      /** The same position as a multi-dimensional index. */
      position: number[];
      expected: number;
      actual: number;
      /** Largest |actual - expected| over all elements (NaN when one is NaN). */
      maxAbsDiff: number;
      /** How many elements are out of tolerance, of `count`. */
      mismatches: number;
      count: number;
      rtol: number;
      atol: number;
    };

/**
 * A parity failure, its facts in fields (`failure`, and the common ones
 * spread onto the error) and `reason` the message without the label, so
 * that a caller that names the comparison itself need not cut the message.
 */
export class ParityError extends Error {
  override name = 'ParityError';
  readonly failure: ParityFailure;
  readonly kind: ParityFailure['kind'];
  readonly label: string | undefined;
  /** The message without the `label: ` prefix. */
  readonly reason: string;
  /** Flat index of the first element out of tolerance; -1 for a shape mismatch. */
  readonly index: number;
  /** The first mismatch's multi-dimensional position ([] for a shape mismatch). */
  readonly position: number[];
  /** The first mismatch's expected and actual values (undefined for a shape mismatch). */
  readonly expected: number | undefined;
  readonly actual: number | undefined;
  /** Largest |actual - expected| (undefined for a shape mismatch). */
  readonly maxAbsDiff: number | undefined;
  /** Elements out of tolerance (undefined for a shape mismatch). */
  readonly mismatches: number | undefined;

  constructor(failure: ParityFailure) {
    const reason = describeFailure(failure);
    super(failure.label ? `${failure.label}: ${reason}` : reason);
    this.failure = failure;
    this.kind = failure.kind;
    this.label = failure.label;
    this.reason = reason;
    const values = failure.kind === 'values' ? failure : undefined;
    this.index = values?.index ?? -1;
    this.position = values?.position ?? [];
    this.expected = values?.expected;
    this.actual = values?.actual;
    this.maxAbsDiff = values?.maxAbsDiff;
    this.mismatches = values?.mismatches;
  }
}

function describeFailure(f: ParityFailure): string {
  if (f.kind === 'shape') return `shape mismatch: expected ${fmtShape(f.expectedShape)} (${f.expectedCount} elements), actual ${fmtShape(f.actualShape)} (${f.actualCount} elements)`;
  const flat = f.position.length > 1 ? ` (flat ${f.index})` : '';
  return (
    `${f.mismatches} of ${f.count} elements differ (rtol=${f.rtol}, atol=${f.atol}); ` +
    `first at index [${f.position.join(',')}]${flat}: expected ${f.expected}, actual ${f.actual}, |diff| ${Math.abs(f.actual - f.expected)}; max |diff| ${f.maxAbsDiff}`
  );
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
  const { rtol = DEFAULT_TOLERANCE.rtol, atol = DEFAULT_TOLERANCE.atol, label, equalNan = false } = opts;
  const a = toFlat(actual);
  const e = toFlat(expected);
  const bothTensors = actual instanceof Tensor && expected instanceof Tensor;
  if ((bothTensors && !sameShape(a.shape, e.shape)) || a.values.length !== e.values.length) {
    throw new ParityError({ kind: 'shape', label, expectedShape: e.shape, actualShape: a.shape, expectedCount: e.values.length, actualCount: a.values.length });
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
  throw new ParityError({ kind: 'values', label, index: first, position, expected: e.values[first]!, actual: a.values[first]!, maxAbsDiff, mismatches, count: e.values.length, rtol, atol });
}
