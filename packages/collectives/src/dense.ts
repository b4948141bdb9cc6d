/**
 * Collectives work on flat element arrays. `dense(t)` gives the elements of
 * a tensor as a typed array that reads and writes the tensor itself (no copy)
 * when it is contiguous, or a working copy that `commit()` writes back.
 */
import { noGrad, tensor, type Tensor, type TypedArray } from '@dtlab/tensor';

/** A flat working view of a tensor's elements. */
export interface Dense {
  data: TypedArray;
  /** Makes writes to `data` visible in the tensor (and marks it modified for autograd). */
  commit(): void;
}

/** The elements of `t` as a flat typed array; see `Dense`. */
export function dense(t: Tensor): Dense {
  if (t.isContiguous()) {
    // The storage itself: collectives reduce in place, as torch.distributed does.
    const data = t._storage.data.subarray(t.offset, t.offset + t.numel);
    return { data, commit: () => void t._storage.version++ };
  }
  const data = t.data();
  return { data, commit: () => noGrad(() => void t.copy_(tensor(data, { shape: [...t.shape] }))) };
}

/** A 1-D tensor holding exactly `data` (copied). */
export function wrap(data: TypedArray): Tensor {
  return tensor(data);
}
