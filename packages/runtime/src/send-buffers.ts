/**
 * The copies a rank's sends make, and spare buffers to make them in.
 *
 * Sends are buffered, so every send copies its tensor. Copying into a fresh
 * ArrayBuffer costs a page fault per 4 KiB page on first touch, several times
 * the copy itself for large messages. But a message received `into` a tensor
 * leaves its buffer free after the copy: the rank keeps a few such buffers and
 * copies its next send of the same size into one, memory already mapped.
 * (In a ring or a ping-pong every rank receives and sends chunks of one size.)
 */
import { type DType, type Tensor, type TypedArray, bytesPerElement, toTransferable } from '@dtlab/tensor';
import type { Payload } from './wire.ts';

/** Spare buffers kept per rank, at most, in bytes. */
const MAX_SPARE_BYTES = 64 * 2 ** 20;
/** Smaller buffers are cheap to allocate and not worth keeping. */
const MIN_SPARE_BYTES = 64 * 2 ** 10;

/** A typed array of `dtype` over all of `buffer`. */
export function typedView(dtype: DType, buffer: ArrayBuffer): TypedArray {
  return dtype === 'float64' ? new Float64Array(buffer) : new Float32Array(buffer);
}

/** `t`'s elements in row-major order: a view of its storage when it is contiguous (no copy), else a copy. */
export function denseElements(t: Tensor): TypedArray {
  return t.isContiguous() ? t._storage.data.subarray(t.offset, t.offset + t.numel) : t.data();
}

/** One rank's spare buffers, by size. */
export class SendBuffers {
  private readonly spare = new Map<number, ArrayBuffer[]>();
  private spareBytes = 0;

  /** A copy of `t` to send: in a spare buffer of the right size if there is one, else in a new one. */
  copy(t: Tensor): Payload {
    const buffer = this.spare.get(t.numel * bytesPerElement(t.dtype))?.pop();
    if (!buffer) return toTransferable(t);
    this.spareBytes -= buffer.byteLength;
    typedView(t.dtype, buffer).set(denseElements(t));
    return { dtype: t.dtype, shape: [...t.shape], buffer };
  }

  /** Keeps `buffer`, whose contents are no longer needed, for a later send (if it is worth it and there is room). */
  recycle(buffer: ArrayBuffer): void {
    const n = buffer.byteLength;
    if (n < MIN_SPARE_BYTES || this.spareBytes + n > MAX_SPARE_BYTES) return;
    let list = this.spare.get(n);
    if (!list) this.spare.set(n, (list = []));
    list.push(buffer);
    this.spareBytes += n;
  }
}
