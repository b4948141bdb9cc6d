/**
 * A tensor's transferable form: plain data (dtype, shape, an ArrayBuffer)
 * that can cross a worker boundary with postMessage, and back.
 */
import { type DType, checkDType } from './dtype.ts';
import { ShapeError, fmtShape } from './errors.ts';
import { checkShape, numelOf } from './shape.ts';
import { Tensor } from './tensor.ts';

/** A tensor as plain data. `buffer` holds exactly the elements, row-major. */
export interface TransferableTensor {
  dtype: DType;
  shape: number[];
  buffer: ArrayBuffer;
}

/**
 * The transferable form of `t`, always a fresh copy whose buffer can be put in
 * postMessage's transfer list (moved, not copied again) without touching `t`.
 */
export function toTransferable(t: Tensor): TransferableTensor {
  // data() is the storage itself when t covers it exactly, else already a fresh copy.
  const elements = t.data();
  const copy = elements === t._storage.data ? elements.slice() : elements;
  return { dtype: t.dtype, shape: [...t.shape], buffer: copy.buffer as ArrayBuffer };
}

/** The tensor of a transferable form; it takes ownership of `x.buffer` (no copy). */
export function fromTransferable(x: TransferableTensor): Tensor {
  const dtype = checkDType(x?.dtype, 'fromTransferable');
  const shape = checkShape('fromTransferable', x.shape);
  if (!(x.buffer instanceof ArrayBuffer)) throw new TypeError('fromTransferable: buffer must be an ArrayBuffer');
  const data = dtype === 'float64' ? new Float64Array(x.buffer) : new Float32Array(x.buffer);
  if (data.length !== numelOf(shape)) {
    throw new ShapeError('fromTransferable', [shape], `a buffer of ${data.length} ${dtype} elements does not fit shape ${fmtShape(shape)}`);
  }
  return Tensor._fromData(data, shape);
}
