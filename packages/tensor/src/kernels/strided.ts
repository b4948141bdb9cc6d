/**
 * Strided loops: the primitives every elementwise op and every copy runs on.
 *
 * A tensor is a flat typed array read through `offset + sum(index[d] * strides[d])`.
 * These loops walk the output in row-major order and keep one running position
 * per input, so views (transposes, slices, broadcasts with stride 0) are read in
 * place without first being copied.
 */
import type { TypedArray } from '../dtype.ts';

/** A strided view of a flat array: where element `index` lives is `offset + index·strides`. */
export interface View {
  data: TypedArray;
  strides: readonly number[];
  offset: number;
}

/**
 * Visits every row of `shape` (all dims but the last) and calls `row` with
 * each input's position at the row start. Rows are visited in row-major order.
 */
function forEachRow(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  offsets: number[],
  row: (positions: number[]) => void,
): void {
  const nd = shape.length;
  const rows = nd <= 1 ? 1 : shape.slice(0, nd - 1).reduce((x, y) => x * y, 1);
  const idx = new Array<number>(Math.max(nd - 1, 0)).fill(0);
  const pos = [...offsets];
  for (let r = 0; r < rows; r++) {
    row(pos);
    for (let d = nd - 2; d >= 0; d--) {
      idx[d]!++;
      for (let k = 0; k < pos.length; k++) pos[k]! += strides[k]![d]!;
      if (idx[d]! < shape[d]!) break;
      for (let k = 0; k < pos.length; k++) pos[k]! -= strides[k]![d]! * shape[d]!;
      idx[d] = 0;
    }
  }
}

function isDense(shape: readonly number[], strides: readonly number[]): boolean {
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== s) return false;
    s *= shape[i]!;
  }
  return true;
}

/** Copies the view `src` of `shape` into `out`, contiguous, starting at `outOffset`. */
export function copyStrided(out: TypedArray, outOffset: number, shape: readonly number[], src: View): void {
  const n = shape.reduce((x, y) => x * y, 1);
  if (n === 0) return;
  if (isDense(shape, src.strides)) {
    out.set(src.data.subarray(src.offset, src.offset + n), outOffset);
    return;
  }
  const nd = shape.length;
  const inner = shape[nd - 1]!;
  const s = src.strides[nd - 1]!;
  const data = src.data;
  let o = outOffset;
  forEachRow(shape, [src.strides], [src.offset], (p) => {
    let i = p[0]!;
    for (let j = 0; j < inner; j++, i += s) out[o++] = data[i]!;
  });
}

/** Writes contiguous `src` (row-major over `shape`) into the view `dst`. */
export function scatterStrided(dst: View, shape: readonly number[], src: TypedArray, srcOffset = 0): void {
  const n = shape.reduce((x, y) => x * y, 1);
  if (n === 0) return;
  if (isDense(shape, dst.strides)) {
    dst.data.set(src.subarray(srcOffset, srcOffset + n), dst.offset);
    return;
  }
  const nd = shape.length;
  const inner = shape[nd - 1]!;
  const s = dst.strides[nd - 1]!;
  const data = dst.data;
  let o = srcOffset;
  forEachRow(shape, [dst.strides], [dst.offset], (p) => {
    let i = p[0]!;
    for (let j = 0; j < inner; j++, i += s) data[i] = src[o++]!;
  });
}

/** `out[i] = f(a[i])` over `shape`, `out` contiguous. */
export function mapUnary(out: TypedArray, shape: readonly number[], a: View, f: (x: number) => number): void {
  const n = out.length;
  if (n === 0) return;
  if (isDense(shape, a.strides)) {
    const d = a.data;
    const off = a.offset;
    for (let i = 0; i < n; i++) out[i] = f(d[off + i]!);
    return;
  }
  const nd = shape.length;
  const inner = shape[nd - 1]!;
  const s = a.strides[nd - 1]!;
  const d = a.data;
  let o = 0;
  forEachRow(shape, [a.strides], [a.offset], (p) => {
    let i = p[0]!;
    for (let j = 0; j < inner; j++, i += s) out[o++] = f(d[i]!);
  });
}

/**
 * `out[i] = f(a[i], b[i])` over the broadcast `shape`, `out` contiguous. The
 * views' strides are already broadcast (0 along a repeated dimension).
 */
export function mapBinary(
  out: TypedArray,
  shape: readonly number[],
  a: View,
  b: View,
  f: (x: number, y: number) => number,
): void {
  const n = out.length;
  if (n === 0) return;
  const ad = a.data;
  const bd = b.data;
  if (isDense(shape, a.strides) && isDense(shape, b.strides)) {
    const ao = a.offset;
    const bo = b.offset;
    for (let i = 0; i < n; i++) out[i] = f(ad[ao + i]!, bd[bo + i]!);
    return;
  }
  const nd = shape.length;
  const inner = shape[nd - 1]!;
  const sa = a.strides[nd - 1]!;
  const sb = b.strides[nd - 1]!;
  let o = 0;
  forEachRow(shape, [a.strides, b.strides], [a.offset, b.offset], (p) => {
    let i = p[0]!;
    let k = p[1]!;
    for (let j = 0; j < inner; j++, i += sa, k += sb) out[o++] = f(ad[i]!, bd[k]!);
  });
}
