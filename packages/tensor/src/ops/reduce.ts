/**
 * Reductions: sum, mean, max over one dim, several dims, or all of them.
 * Each reduction moves the reduced dims to the end, so that every output
 * element reduces one contiguous row (kernels/reduce.ts).
 */
import { allocate } from '../dtype.ts';
import { ShapeError, fmtShape } from '../errors.ts';
import { normalizeDim, numelOf, sameShape } from '../shape.ts';
import { Tensor } from '../tensor.ts';
import { maxRows, sumRows } from '../kernels/reduce.ts';
import { noGrad } from '../autograd/grad-mode.ts';
import { record } from './record.ts';
import { denseCopy, permute, reshape } from './movement.ts';
import { chargeReduction } from '../meter/charge.ts';
import { releaseStorage } from '../meter/allocation.ts';

// Captured before the runtime wraps the globals: index scratch is not the program's memory.
const I32 = Int32Array;

/** The reduced dims, sorted and validated; all dims when `dim` is omitted. */
function reducedDims(op: string, t: Tensor, dim: number | number[] | undefined): number[] {
  if (dim === undefined) return t.shape.map((_, i) => i);
  const dims = (Array.isArray(dim) ? dim : [dim]).map((d) => normalizeDim(op, d, t.ndim));
  if (new Set(dims).size !== dims.length) throw new ShapeError(op, [t.shape], `dim ${JSON.stringify(dim)} names a dimension twice`);
  return dims.sort((x, y) => x - y);
}

/** Output shape of reducing `dims`: size 1 there with keepdim, else dropped. */
function reducedShape(shape: readonly number[], dims: number[], keepdim: boolean): number[] {
  return keepdim ? shape.map((d, i) => (dims.includes(i) ? 1 : d)) : shape.filter((_, i) => !dims.includes(i));
}

/**
 * `t` with `dims` moved last, contiguous: rows of `len` elements, one per
 * output. The copy this may need is the implementation's own (a device
 * kernel reads the layout as it is), so it is not charged, and `done()`
 * stops counting it once the reduction has read it.
 */
function rowsOf(t: Tensor, dims: number[]) {
  const kept = t.shape.map((_, i) => i).filter((i) => !dims.includes(i));
  const view = noGrad(() => permute(t, [...kept, ...dims]));
  const moved = view.isContiguous() ? view : denseCopy(view);
  const len = numelOf(dims.map((d) => t.shape[d]!));
  const done = () => {
    if (moved !== view) releaseStorage(moved._storage.data.buffer);
  };
  return { data: moved._storage.data, offset: moved.offset, rows: len === 0 ? numelOf(kept.map((d) => t.shape[d]!)) : moved.numel / len, len, order: [...kept, ...dims], done };
}

/** Sum over `dim` (all dims when omitted). */
export function sum(t: Tensor, dim?: number | number[], keepdim = false): Tensor {
  const dims = reducedDims('sum', t, dim);
  const { data, offset, rows, len, done } = rowsOf(t, dims);
  chargeReduction('sum', t.numel, rows, t.dtype);
  const outShape = reducedShape(t.shape, dims, keepdim);
  const out = allocate(t.dtype, rows, outShape);
  sumRows(data, offset, rows, len, out);
  done();
  return record('sum', Tensor._fromData(out, reducedShape(t.shape, dims, keepdim)), [t], { keepShape: reducedShape(t.shape, dims, true) });
}

/** Mean over `dim` (all dims when omitted): the sum divided by the count. */
export function mean(t: Tensor, dim?: number | number[], keepdim = false): Tensor {
  const dims = reducedDims('mean', t, dim);
  const count = numelOf(dims.map((d) => t.shape[d]!));
  return sum(t, dims, keepdim).div(count);
}

/**
 * Maximum over `dim`, or over everything when omitted. The gradient flows to
 * the first maximal element along `dim`; for a full reduction it is shared
 * evenly among ties, as in torch.
 */
export function max(t: Tensor, dim?: number, keepdim = false): Tensor {
  if (t.numel === 0) throw new ShapeError('max', [t.shape], `cannot take the max of an empty tensor ${fmtShape(t.shape)}`);
  const dims = reducedDims('max', t, dim);
  const { data, offset, rows, len, order, done } = rowsOf(t, dims);
  chargeReduction('max', t.numel, rows, t.dtype);
  const out = allocate(t.dtype, rows, reducedShape(t.shape, dims, keepdim));
  const at = new I32(rows);
  maxRows(data, offset, rows, len, out, at);
  const keepShape = reducedShape(t.shape, dims, true);
  // The mask marks which input elements receive the gradient.
  const mask = allocate(t.dtype, t.numel, t.shape);
  if (dim === undefined) {
    // A NaN maximum ties with every NaN element (NaN === NaN is false), as in torch.
    const m = out[0]!;
    const isMax = (x: number) => x === m || (x !== x && m !== m);
    let ties = 0;
    for (let i = 0; i < len; i++) if (isMax(data[offset + i]!)) ties++;
    for (let i = 0; i < len; i++) if (isMax(data[offset + i]!)) mask[i] = 1 / ties;
  } else {
    for (let r = 0; r < rows; r++) mask[r * len + at[r]!] = 1;
  }
  const movedShape = order.map((d) => t.shape[d]!);
  const inverse = order.map((_, i) => order.indexOf(i));
  const maskView = noGrad(() => permute(Tensor._fromData(mask, movedShape), inverse));
  const maskT = maskView.isContiguous() ? maskView : denseCopy(maskView);
  if (maskT !== maskView) releaseStorage(mask.buffer);
  done();
  return record('max', Tensor._fromData(out, reducedShape(t.shape, dims, keepdim)), [t], { keepShape, mask: maskT });
}

/** Flat positions (or positions along `dim`) of the first maximum. */
export function argmax(t: Tensor, dim?: number): number[] {
  const dims = reducedDims('argmax', t, dim);
  const { data, offset, rows, len, done } = rowsOf(t, dims);
  chargeReduction('argmax', t.numel, rows, t.dtype);
  const at = new I32(rows);
  const scratch = allocate(t.dtype, rows);
  maxRows(data, offset, rows, len, scratch, at);
  releaseStorage(scratch.buffer);
  done();
  return Array.from(at);
}

/**
 * Sums `g` down to `shape`: the reverse of broadcasting. Dims that broadcasting
 * added in front are summed away; dims where `shape` has 1 are summed with keepdim.
 */
export function sumTo(g: Tensor, shape: readonly number[]): Tensor {
  if (sameShape(g.shape, shape)) return g;
  const lead = g.ndim - shape.length;
  const dims: number[] = [];
  for (let i = 0; i < g.ndim; i++) if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) dims.push(i);
  return reshape(sum(g, dims, true), [...shape]);
}
