/**
 * Pieces every algorithm shares: the reserved tag, ring neighbours, chunk
 * bounds that respect item boundaries, and sending a slice of a buffer.
 */
import { Tensor, chunkBounds, type ChunkBound, type TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

/**
 * The first tag of collective messages: the i-th collective call on a Comm
 * sends all its messages with tag COLLECTIVE_TAG + i (see `announce` in
 * call.ts). So collectives that are in flight together never take each
 * other's messages, and a rank that enters a different collective than its
 * peers at the same call still receives their messages (and the fabric's
 * call check reports the mismatch) instead of waiting forever. Tags from
 * 2^30 up are reserved for collectives; use smaller tags for your own messages.
 */
export const COLLECTIVE_TAG = 2 ** 30;

/** `a mod n` in [0, n), also for negative `a`. */
export function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

/** The uneven-split rule over items of `itemSize` elements: bounds in elements. */
export function itemBounds(count: number, parts: number, itemSize = 1): ChunkBound[] {
  if (count % itemSize !== 0) throw new RangeError(`a buffer of ${count} elements is not a whole number of items of ${itemSize} elements`);
  return chunkBounds(count / itemSize, parts).map(({ start, end }) => ({ start: start * itemSize, end: end * itemSize }));
}

/** Bounds of consecutive regions of the given sizes. */
export function boundsFromCounts(counts: readonly number[]): ChunkBound[] {
  let at = 0;
  return counts.map((n) => ({ start: at, end: (at += n) }));
}

/** Elements `b.start..b.end` of `data`, as a view (no copy). */
export function region(data: TypedArray, b: ChunkBound): TypedArray {
  return data.subarray(b.start, b.end);
}

/**
 * A 1-D tensor over `data` itself, not a copy: `send` copies the elements
 * once on their way out, and a second copy here would halve the bandwidth.
 */
export function asTensor(data: TypedArray): Tensor {
  return Tensor._fromData(data, [data.length]);
}

/** Sends `data` to `dst` with `tag` (the call's tag). */
export function sendData(comm: Comm, dst: number, data: TypedArray, tag: number): void {
  comm.isend(dst, asTensor(data), { tag });
}

/** Receives a message from `src` with `tag` (the call's tag); resolves to its elements. */
export async function recvData(comm: Comm, src: number, tag: number): Promise<TypedArray> {
  return (await comm.recv(src, { tag })).data();
}
