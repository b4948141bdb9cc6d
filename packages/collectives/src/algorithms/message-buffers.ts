/**
 * Message buffers the ring reuses instead of allocating.
 *
 * A plain `send` copies the tensor, mostly into new memory (the runtime
 * reuses only the buffers of messages received `into` a tensor). For large
 * buffers the first touch of new memory (a page fault per 4 KiB page) costs
 * more than the copy itself, and it would be paid on every message. So the
 * ring sends buffers it owns with `{ transfer: true }` (moved, not copied),
 * passes on each buffer it receives as its next message, and keeps the last
 * one, per Comm, to carry the first message of its next call. In steady
 * state an all-reduce allocates nothing.
 */
import { allocate, dtypeOfArray, type DType, type TypedArray } from '@dtlab/tensor';
import { releaseStorage } from '@dtlab/tensor/meter';
import type { Comm } from '@dtlab/runtime';

// One spare per Comm: a WeakMap, so that it goes when the Comm goes.
const spares = new WeakMap<Comm, TypedArray>();

/** A buffer of `n` elements of `dtype`: `comm`'s spare if it fits, else a new one. Its contents are left over. */
function takeBuffer(comm: Comm, dtype: DType, n: number): TypedArray {
  const spare = spares.get(comm);
  if (spare && spare.length === n && (spare instanceof Float64Array) === (dtype === 'float64')) {
    spares.delete(comm);
    return spare;
  }
  return allocate(dtype, n);
}

/**
 * Keeps `buf` (a buffer this rank owns and no longer needs) for the next
 * `takeBuffer` on `comm`. On a virtual device it stops counting as the
 * program's memory: it is the library's message workspace, as the Comm's
 * own spare send buffers are, and a check of what a program keeps between
 * steps must not see the last chunk of its last collective.
 */
export function keepBuffer(comm: Comm, buf: TypedArray): void {
  releaseStorage(buf.buffer);
  spares.set(comm, buf);
}

/** A copy of `data` in a buffer this rank owns (reused when it can be), ready to send with `transfer`. */
export function ownedCopy(comm: Comm, data: TypedArray): TypedArray {
  const out = takeBuffer(comm, dtypeOfArray(data), data.length);
  out.set(data);
  return out;
}
