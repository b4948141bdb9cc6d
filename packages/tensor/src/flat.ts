/**
 * Flat buffers: many tensors laid end to end in one contiguous 1-D buffer.
 * Data-parallel code reduces one flat buffer instead of many small tensors,
 * and ZeRO/FSDP shard it into per-rank slices (see `chunkBounds`).
 */
import { type DType, allocate, promoteTypes } from './dtype.ts';
import { ShapeError, fmtShape } from './errors.ts';
import { contiguousStrides, numelOf } from './shape.ts';
import { Storage } from './storage.ts';
import { Tensor } from './tensor.ts';
import { copyStrided } from './kernels/strided.ts';
import { viewOf } from './ops/record.ts';
import { chargeCopy } from './meter/charge.ts';

/** Copies `tensors` end to end into a new 1-D tensor (outside the autograd graph). */
export function flattenTensors(tensors: readonly Tensor[], dtype?: DType): Tensor {
  const dt = dtype ?? (tensors.length ? tensors.map((t) => t.dtype).reduce(promoteTypes) : 'float32');
  const total = tensors.reduce((n, t) => n + t.numel, 0);
  chargeCopy('flatten', total, dt);
  const out = allocate(dt, total, [total]);
  let at = 0;
  for (const t of tensors) {
    copyStrided(out, at, t.shape, viewOf(t));
    at += t.numel;
  }
  return Tensor._fromData(out, [out.length]);
}

/** Views of consecutive regions of the 1-D `flat`, one per shape. No copy. */
export function unflattenTensors(flat: Tensor, shapes: readonly (readonly number[])[]): Tensor[] {
  const total = shapes.reduce((n, s) => n + numelOf(s), 0);
  if (flat.ndim !== 1 || !flat.isContiguous() || flat.numel !== total) {
    throw new ShapeError('unflattenTensors', [flat.shape], `needs a contiguous 1-D tensor of ${total} elements for shapes ${shapes.map(fmtShape).join(' ')}, got ${fmtShape(flat.shape)}`);
  }
  let at = flat.offset;
  return shapes.map((s) => {
    const t = new Tensor(flat._storage, s, contiguousStrides(s), at);
    at += numelOf(s);
    return t;
  });
}

/**
 * One contiguous buffer that owns the data of a list of tensors. `adopt`
 * moves each tensor's values into the buffer and re-points the tensor at its
 * region, so a model's parameters keep their identity (and their place in
 * the optimizer) while `buffer` sees them all as one 1-D tensor.
 */
export class FlatBuffer {
  private constructor(
    /** The whole buffer as a 1-D tensor. Writes to it are writes to the tensors. */
    readonly buffer: Tensor,
    /** The adopted tensors, in order. */
    readonly tensors: readonly Tensor[],
    /** Start of each tensor's region in `buffer`. */
    readonly offsets: readonly number[],
  ) {}

  /** Moves `tensors` into one new buffer (of `dtype`, default their promoted dtype). */
  static adopt(tensors: readonly Tensor[], dtype?: DType): FlatBuffer {
    const flat = flattenTensors(tensors, dtype);
    const storage = flat._storage;
    const offsets: number[] = [];
    let at = 0;
    for (const t of tensors) {
      offsets.push(at);
      repoint(t, storage, at);
      at += t.numel;
    }
    return new FlatBuffer(new Tensor(storage, [at]), tensors, offsets);
  }

  /** Total number of elements. */
  get numel(): number {
    return this.buffer.numel;
  }

  /** The gradients of the adopted tensors, flattened into a new buffer (zeros where `.grad` is null). */
  flatGrads(): Tensor {
    return flattenTensors(this.tensors.map((t) => t.grad ?? Tensor._fromData(allocate(t.dtype, t.numel), t.shape)), this.buffer.dtype);
  }

  /** Sets each adopted tensor's `.grad` to a view of its region of `flat` (no copy). */
  setGradsFrom(flat: Tensor): void {
    unflattenTensors(flat, this.tensors.map((t) => t.shape)).forEach((g, i) => (this.tensors[i]!.grad = g));
  }
}

/** Makes `t` a contiguous view of `storage` at `offset`, like torch's `p.data = ...`. */
function repoint(t: Tensor, storage: Storage, offset: number): void {
  const m = t as unknown as { _storage: Storage; strides: readonly number[]; offset: number };
  m._storage = storage;
  m.strides = Object.freeze(contiguousStrides(t.shape));
  m.offset = offset;
}
