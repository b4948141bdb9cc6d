/**
 * In-place ops. They write into the tensor's storage (and so into every view
 * sharing it), bump the storage version, and are not recorded by autograd:
 * use them under `noGrad`, on buffers, gradients and optimizer state.
 */
import { AutogradError, ShapeError, fmtShape } from '../errors.ts';
import { broadcastShapes, sameShape } from '../shape.ts';
import { Tensor, type TensorLike } from '../tensor.ts';
import { allocate } from '../dtype.ts';
import { mapBinary, scatterStrided } from '../kernels/strided.ts';
import { isGradEnabled } from '../autograd/grad-mode.ts';
import { asTensor, viewOf } from './record.ts';
import { charge, chargeCopy, chargeElementwise } from '../meter/charge.ts';
import { releaseStorage } from '../meter/allocation.ts';

/** Refuses an in-place write that autograd could not account for. */
function checkInplace(op: string, t: Tensor, other?: Tensor): void {
  if (!isGradEnabled()) return;
  if (t.requiresGrad && t.isLeaf) {
    throw new AutogradError(op, `a leaf tensor that requires grad${t.name ? ` (${t.name})` : ''} cannot be modified in place while autograd records; wrap the update in noGrad(() => ...)`);
  }
  if (t.requiresGrad) {
    throw new AutogradError(op, 'this tensor is part of the autograd graph, and in-place ops are not recorded; use the out-of-place op (add, mul, ...) or wrap the update in noGrad(() => ...)');
  }
  if (other?.requiresGrad) {
    throw new AutogradError(op, 'the operand requires grad, but in-place ops are not recorded by autograd; use the out-of-place op, or detach() the operand, or wrap the update in noGrad(() => ...)');
  }
}

function writeBinary(op: string, t: Tensor, otherLike: TensorLike, f: (x: number, y: number) => number): Tensor {
  const other = asTensor(otherLike, t.dtype);
  checkInplace(op, t, other);
  const shape = broadcastShapes(op, t.shape, other.shape);
  if (!sameShape(shape, t.shape)) {
    throw new ShapeError(op, [t.shape, other.shape], `cannot write a result of shape ${fmtShape(shape)} into a tensor of shape ${fmtShape(t.shape)} in place`);
  }
  if (op === 'copy_') chargeCopy(op, t.numel, other.dtype, t.dtype);
  else chargeElementwise(op, t.numel, t.numel + other.numel, t.dtype);
  const td = t._storage.data;
  const od = other._storage.data;
  const aliased = other._storage === t._storage && other.offset !== t.offset;
  if (!aliased && t.isContiguous() && other.isContiguous() && sameShape(t.shape, other.shape)) {
    // Fast path for the common case: same shape, both dense (optimizers, reductions).
    const n = t.numel;
    for (let i = 0, a = t.offset, b = other.offset; i < n; i++, a++, b++) td[a] = f(td[a]!, od[b]!);
  } else {
    const tmp = allocate(t.dtype, t.numel);
    mapBinary(tmp, shape, viewOf(t), viewOf(other, shape), f);
    scatterStrided(viewOf(t), t.shape, tmp);
    releaseStorage(tmp.buffer);
  }
  t._storage.version++;
  return t;
}

/** `t += alpha * other`. */
export function add_<T extends Tensor>(t: T, other: TensorLike, alpha: number): T {
  return writeBinary('add_', t, other, alpha === 1 ? (x, y) => x + y : (x, y) => x + alpha * y) as T;
}
/** `t *= other`. */
export function mul_<T extends Tensor>(t: T, other: TensorLike): T {
  return writeBinary('mul_', t, other, (x, y) => x * y) as T;
}
/** `t /= other`. */
export function div_<T extends Tensor>(t: T, other: TensorLike): T {
  return writeBinary('div_', t, other, (x, y) => x / y) as T;
}
/** `t[...] = src`, broadcasting `src` to `t`'s shape and converting its dtype. */
export function copy_<T extends Tensor>(t: T, src: TensorLike): T {
  // The common case, a dense copy between same-shaped tensors, is one block copy.
  if (src instanceof Tensor && src._storage !== t._storage && sameShape(src.shape, t.shape) && src.isContiguous() && t.isContiguous()) {
    checkInplace('copy_', t, src);
    chargeCopy('copy_', t.numel, src.dtype, t.dtype);
    t._storage.data.set(src._storage.data.subarray(src.offset, src.offset + src.numel), t.offset);
    t._storage.version++;
    return t;
  }
  return writeBinary('copy_', t, src, (_x, y) => y) as T;
}
/** Every element of `t` set to `value`. */
export function fill_<T extends Tensor>(t: T, value: number): T {
  checkInplace('fill_', t);
  // Writes every element once.
  charge('fill_', 0, t.numel * (t.dtype === 'float64' ? 8 : 4), t.dtype);
  if (t.isContiguous()) t._storage.data.fill(value, t.offset, t.offset + t.numel);
  else {
    const tmp = allocate(t.dtype, t.numel).fill(value);
    scatterStrided(viewOf(t), t.shape, tmp);
    releaseStorage(tmp.buffer);
  }
  t._storage.version++;
  return t;
}
