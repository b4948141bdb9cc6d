/**
 * Naive references for the tests: index arithmetic written the slow, obvious
 * way on plain `number[]`, independent of the library's strided kernels.
 * A test computes the expected result here and compares the library with it.
 */

export type Shape = readonly number[];

/** Number of elements of `shape`. */
export function numel(shape: Shape): number {
  return shape.reduce((n, d) => n * d, 1);
}

/** Every multi-index of `shape`, in row-major order (the last dim moves fastest). */
export function indices(shape: Shape): number[][] {
  const out: number[][] = [];
  const n = numel(shape);
  for (let flat = 0; flat < n; flat++) out.push(unravel(flat, shape));
  return out;
}

/** The multi-index of row-major position `flat`. */
export function unravel(flat: number, shape: Shape): number[] {
  const idx = new Array<number>(shape.length).fill(0);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = flat % shape[d]!;
    flat = Math.floor(flat / shape[d]!);
  }
  return idx;
}

/** The row-major position of multi-index `idx`. */
export function ravel(idx: readonly number[], shape: Shape): number {
  let flat = 0;
  for (let d = 0; d < shape.length; d++) flat = flat * shape[d]! + idx[d]!;
  return flat;
}

/**
 * NumPy's broadcasting rule, written independently: pad the shorter shape
 * with leading 1s, then each pair must be equal or contain a 1. Null when
 * the shapes cannot broadcast.
 */
export function broadcastRef(a: Shape, b: Shape): number[] | null {
  const n = Math.max(a.length, b.length);
  const pa = [...new Array<number>(n - a.length).fill(1), ...a];
  const pb = [...new Array<number>(n - b.length).fill(1), ...b];
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pa[i] === pb[i]) out.push(pa[i]!);
    else if (pa[i] === 1) out.push(pb[i]!);
    else if (pb[i] === 1) out.push(pa[i]!);
    else return null;
  }
  return out;
}

/** The element of (`data`, `shape`) that broadcasting places at `outIdx` of a larger shape. */
export function readBroadcast(data: readonly number[], shape: Shape, outIdx: readonly number[]): number {
  const lead = outIdx.length - shape.length;
  const idx = shape.map((d, i) => (d === 1 ? 0 : outIdx[lead + i]!));
  return data[ravel(idx, shape)]!;
}

/** Elementwise `f(a, b)` with broadcasting, by visiting every output index. */
export function binaryRef(
  a: readonly number[],
  aShape: Shape,
  b: readonly number[],
  bShape: Shape,
  f: (x: number, y: number) => number,
): { shape: number[]; data: number[] } {
  const shape = broadcastRef(aShape, bShape);
  if (!shape) throw new Error(`test bug: ${JSON.stringify(aShape)} and ${JSON.stringify(bShape)} do not broadcast`);
  const data = indices(shape).map((idx) => f(readBroadcast(a, aShape, idx), readBroadcast(b, bShape, idx)));
  return { shape, data };
}

/** Reduces `dims` of (`data`, `shape`) with `f` starting from `init`; keepdim as in torch. */
export function reduceRef(
  data: readonly number[],
  shape: Shape,
  dims: readonly number[],
  keepdim: boolean,
  init: number,
  f: (acc: number, x: number) => number,
): { shape: number[]; data: number[] } {
  const keepShape = shape.map((d, i) => (dims.includes(i) ? 1 : d));
  const acc = new Array<number>(numel(keepShape)).fill(init);
  indices(shape).forEach((idx, flat) => {
    const o = ravel(idx.map((v, i) => (dims.includes(i) ? 0 : v)), keepShape);
    acc[o] = f(acc[o]!, data[flat]!);
  });
  const outShape = keepdim ? keepShape : shape.filter((_, i) => !dims.includes(i));
  return { shape: outShape, data: acc };
}

/** A deterministic stream of small integers in [-9, 9]: sums of them are exact in float32. */
export function smallInts(n: number, seed: number): number[] {
  let s = (seed * 2654435761) >>> 0 || 1;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    // xorshift32: independent of the library's generator.
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out.push((s % 19) - 9);
  }
  return out;
}

/** Naive matrix product of row-major [m,k] and [k,n]. */
export function matmulRef(a: readonly number[], b: readonly number[], m: number, k: number, n: number): number[] {
  const out = new Array<number>(m * n).fill(0);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p]! * b[p * n + j]!;
      out[i * n + j] = s;
    }
  }
  return out;
}
