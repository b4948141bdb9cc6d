/**
 * Movement ops: they change how elements are indexed, not their values.
 * Most are views that share storage (new shape/strides/offset, no copy);
 * `clone`, `cat` and reshaping a non-contiguous tensor copy.
 */
import { allocate, promoteTypes } from '../dtype.ts';
import { ShapeError, fmtShape } from '../errors.ts';
import { contiguousStrides, inferShape, normalizeDim, numelOf } from '../shape.ts';
import { chunkBounds } from '../split.ts';
import { Tensor } from '../tensor.ts';
import { copyStrided, scatterStrided } from '../kernels/strided.ts';
import { record, viewOf } from './record.ts';
import { chargeCopy } from '../meter/charge.ts';
import { releaseStorage } from '../meter/allocation.ts';

function view(t: Tensor, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
  return new Tensor(t._storage, shape, strides, offset);
}

/** A contiguous copy of `t` that stays in the graph. */
export function clone(t: Tensor): Tensor {
  chargeCopy('clone', t.numel, t.dtype);
  const out = allocate(t.dtype, t.numel, t.shape);
  copyStrided(out, 0, t.shape, viewOf(t));
  return record('clone', Tensor._fromData(out, t.shape), [t]);
}

/**
 * A contiguous copy of `t` outside the graph and not charged: for the copies
 * an op makes for its own convenience (a reduction reading rows), which a
 * device kernel would not need. The caller releases it when done.
 */
export function denseCopy(t: Tensor): Tensor {
  const out = allocate(t.dtype, t.numel, t.shape);
  copyStrided(out, 0, t.shape, viewOf(t));
  return Tensor._fromData(out, t.shape);
}

/** Same elements in a new shape; a view of a contiguous tensor, else a copy. */
export function reshape(t: Tensor, shape: readonly number[]): Tensor {
  const target = inferShape('reshape', t.shape, shape);
  const src = t.isContiguous() ? t : clone(t);
  return record('reshape', view(src, target, contiguousStrides(target), src.offset), [src]);
}

/** Reorders dimensions: output dim i is input dim `dims[i]`. */
export function permute(t: Tensor, dims: readonly number[]): Tensor {
  const nd = t.ndim;
  const norm = dims.map((d) => normalizeDim('permute', d, nd));
  if (norm.length !== nd || new Set(norm).size !== nd) {
    throw new ShapeError('permute', [t.shape], `dims ${JSON.stringify(dims)} are not a permutation of the ${nd} dimensions of ${fmtShape(t.shape)}`);
  }
  const out = view(t, norm.map((d) => t.shape[d]!), norm.map((d) => t.strides[d]!), t.offset);
  return record('permute', out, [t], { dims: norm });
}

/** Swaps `dim0` and `dim1`. */
export function transpose(t: Tensor, dim0: number, dim1: number): Tensor {
  const order = t.shape.map((_, i) => i);
  const a = normalizeDim('transpose', dim0, t.ndim);
  const b = normalizeDim('transpose', dim1, t.ndim);
  [order[a], order[b]] = [order[b]!, order[a]!];
  return permute(t, order);
}

/** Elements `start..end` along `dim`. Negative bounds count from the end; bounds clamp as in Python slicing. */
export function slice(t: Tensor, dim: number, start: number, end?: number): Tensor {
  const d = normalizeDim('slice', dim, t.ndim);
  const size = t.shape[d]!;
  if (!Number.isInteger(start) || (end !== undefined && !Number.isInteger(end))) {
    throw new ShapeError('slice', [t.shape], `start and end must be integers, got ${start} and ${end}`);
  }
  const clamp = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const s = clamp(start);
  const e = Math.max(clamp(end ?? size), s);
  const shape = [...t.shape];
  shape[d] = e - s;
  const out = view(t, shape, t.strides, t.offset + s * t.strides[d]!);
  return record('slice', out, [t], { dim: d, start: s });
}

/** `parts` views along `dim` under the kit's uneven-split rule (see split.ts). */
export function chunk(t: Tensor, parts: number, dim: number): Tensor[] {
  const d = normalizeDim('chunk', dim, t.ndim);
  return chunkBounds(t.shape[d]!, parts).map(({ start, end }) => slice(t, d, start, end));
}

/** Collapses dims `startDim..endDim` into one. */
export function flatten(t: Tensor, startDim: number, endDim: number): Tensor {
  if (t.ndim === 0) return reshape(t, [1]);
  const s = normalizeDim('flatten', startDim, t.ndim);
  const e = normalizeDim('flatten', endDim, t.ndim);
  if (e < s) throw new ShapeError('flatten', [t.shape], `endDim ${endDim} comes before startDim ${startDim}`);
  const shape = [...t.shape.slice(0, s), numelOf(t.shape.slice(s, e + 1)), ...t.shape.slice(e + 1)];
  return reshape(t, shape);
}

/** Inserts a size-1 dimension at `dim` (a view, whatever the layout). */
export function unsqueeze(t: Tensor, dim: number): Tensor {
  const d = normalizeDim('unsqueeze', dim, t.ndim + 1);
  const shape = [...t.shape];
  const strides = [...t.strides];
  shape.splice(d, 0, 1);
  strides.splice(d, 0, 0);
  return record('reshape', view(t, shape, strides, t.offset), [t]);
}

/** Removes size-1 dimension `dim`, or all of them (a view). */
export function squeeze(t: Tensor, dim?: number): Tensor {
  const drop = dim === undefined ? t.shape.map((n, i) => (n === 1 ? i : -1)).filter((i) => i >= 0) : [normalizeDim('squeeze', dim, t.ndim)];
  const keep = t.shape.map((_, i) => i).filter((i) => !drop.includes(i) || t.shape[i] !== 1);
  return record('reshape', view(t, keep.map((i) => t.shape[i]!), keep.map((i) => t.strides[i]!), t.offset), [t]);
}

/** Repeats size-1 dims (and new leading dims) up to `shape` with stride 0; -1 keeps a size. */
export function expand(t: Tensor, shape: readonly number[]): Tensor {
  const lead = shape.length - t.ndim;
  if (lead < 0) throw new ShapeError('expand', [t.shape, shape], `cannot expand ${fmtShape(t.shape)} to fewer dimensions ${fmtShape(shape)}`);
  const outShape: number[] = [];
  const strides: number[] = [];
  shape.forEach((n, i) => {
    const have = i < lead ? 1 : t.shape[i - lead]!;
    const size = n === -1 && i >= lead ? have : n;
    if (!Number.isInteger(size) || size < 0) {
      throw new ShapeError('expand', [t.shape, shape], `cannot expand ${fmtShape(t.shape)} to ${fmtShape(shape)}: size ${n} at dim ${i} is not allowed (-1 keeps an existing size; a new leading dim needs its size)`);
    }
    if (have !== size && have !== 1) {
      throw new ShapeError('expand', [t.shape, shape], `cannot expand ${fmtShape(t.shape)} to ${fmtShape(shape)}: size ${have} != ${size} at dim ${i} (only size-1 dims expand)`);
    }
    outShape.push(size);
    strides.push(i < lead || have !== size ? 0 : t.strides[i - lead]!);
  });
  return record('expand', view(t, outShape, strides, t.offset), [t]);
}

/** Concatenates along `dim`; every other size must match. Mixed dtypes promote. */
export function cat(tensors: readonly Tensor[], dim: number): Tensor {
  if (tensors.length === 0) throw new ShapeError('cat', [], 'needs at least one tensor');
  const first = tensors[0]!;
  if (first.ndim === 0) throw new ShapeError('cat', tensors.map((x) => x.shape), 'cannot concatenate 0-D tensors; unsqueeze(0) them first, or use reshape(1)');
  const d = normalizeDim('cat', dim, first.ndim);
  for (const [i, t] of tensors.entries()) {
    if (t.ndim !== first.ndim || t.shape.some((n, k) => k !== d && n !== first.shape[k])) {
      throw new ShapeError('cat', tensors.map((x) => x.shape), `tensor ${i} has shape ${fmtShape(t.shape)} but tensor 0 has ${fmtShape(first.shape)}; sizes must match except in dim ${d}`);
    }
  }
  const shape = [...first.shape];
  shape[d] = tensors.reduce((n, t) => n + t.shape[d]!, 0);
  const dtype = tensors.map((t) => t.dtype).reduce(promoteTypes);
  chargeCopy('cat', numelOf(shape), dtype);
  const out = Tensor._fromData(allocate(dtype, numelOf(shape), shape), shape);
  const sizes: number[] = [];
  let at = 0;
  for (const t of tensors) {
    const region = view(out, t.shape, out.strides, at * out.strides[d]!);
    const tmp = allocate(dtype, t.numel);
    copyStrided(tmp, 0, t.shape, viewOf(t));
    scatterStrided(viewOf(region), t.shape, tmp);
    releaseStorage(tmp.buffer);
    sizes.push(t.shape[d]!);
    at += t.shape[d]!;
  }
  return record('cat', out, tensors, { dim: d, sizes });
}

/** Zeros of `shape` with `g` written into elements `start..` along `dim`: the gradient of `slice`. */
export function padSlice(g: Tensor, shape: readonly number[], dim: number, start: number): Tensor {
  // Writes the zeros and copies g in: a copy of the output's size.
  chargeCopy('slice backward', numelOf(shape), g.dtype);
  const out = Tensor._fromData(allocate(g.dtype, numelOf(shape), shape), shape);
  const region = view(out, g.shape, out.strides, start * out.strides[dim]!);
  const tmp = allocate(g.dtype, g.numel);
  copyStrided(tmp, 0, g.shape, viewOf(g));
  scatterStrided(viewOf(region), g.shape, tmp);
  releaseStorage(tmp.buffer);
  return out;
}
