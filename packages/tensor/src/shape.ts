/**
 * Shape arithmetic: element counts, row-major strides, dimension indices and
 * NumPy broadcasting. Pure functions on `number[]`; no tensors here.
 */
import { ShapeError, fmtShape } from './errors.ts';

/** Number of elements of a tensor with this shape (1 for a scalar `[]`). */
export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major (C-order) strides: the last dimension moves fastest. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/** Throws unless `shape` is a list of non-negative integers. */
export function checkShape(op: string, shape: readonly number[]): number[] {
  if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new ShapeError(op, [], `shape must be a list of non-negative integers, got ${JSON.stringify(shape)}`);
  }
  return [...shape];
}

/** Resolves a possibly negative `dim` against `ndim` dimensions, as torch does. */
export function normalizeDim(op: string, dim: number, ndim: number): number {
  const d = dim < 0 ? dim + ndim : dim;
  if (!Number.isInteger(dim) || d < 0 || d >= Math.max(ndim, 1)) {
    throw new ShapeError(op, [], `dim ${dim} is out of range for a tensor with ${ndim} dimension(s)`);
  }
  return d;
}

/**
 * NumPy broadcasting: align shapes on the right; each pair of sizes must be
 * equal or one of them 1, and the result takes the larger.
 */
export function broadcastShapes(op: string, a: readonly number[], b: readonly number[]): number[] {
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i] ?? 1;
    const db = b[b.length - n + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new ShapeError(
        op,
        [a, b],
        `shapes ${fmtShape(a)} and ${fmtShape(b)} cannot broadcast: size ${da} != ${db} at dim ${i - n} (sizes must match or one must be 1)`,
      );
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/**
 * Strides that read a tensor of `shape`/`strides` as if it had the broadcast
 * shape `target`: broadcast dimensions get stride 0, so one element repeats.
 */
export function broadcastStrides(shape: readonly number[], strides: readonly number[], target: readonly number[]): number[] {
  const out = new Array<number>(target.length).fill(0);
  const lead = target.length - shape.length;
  for (let i = 0; i < shape.length; i++) out[lead + i] = shape[i] === 1 ? 0 : strides[i]!;
  return out;
}

/** True when two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Resolves a single -1 in a reshape target against `numel` elements. */
export function inferShape(op: string, from: readonly number[], shape: readonly number[]): number[] {
  const numel = numelOf(from);
  const out = [...shape];
  const unknown = out.indexOf(-1);
  if (out.indexOf(-1, unknown + 1) !== -1) throw new ShapeError(op, [from, shape], 'only one dimension can be -1');
  if (unknown >= 0) {
    const known = numelOf(out.filter((_, i) => i !== unknown));
    if (known === 0 || numel % known !== 0) {
      throw new ShapeError(op, [from, shape], `cannot infer -1 in ${fmtShape(shape)} for ${numel} elements`);
    }
    out[unknown] = numel / known;
  }
  checkShape(op, out);
  if (numelOf(out) !== numel) {
    throw new ShapeError(op, [from, shape], `shape ${fmtShape(shape)} has ${numelOf(out)} elements but the tensor ${fmtShape(from)} has ${numel}`);
  }
  return out;
}
