/**
 * Ring algorithms. Ranks form a ring r -> r+1; in each of N-1 steps every
 * rank sends one chunk to its next neighbour and receives one from its
 * previous neighbour, so every link carries traffic in every step and each
 * rank sends (N-1)/N of the buffer per phase, whatever N is.
 *
 * Reduce-scatter, step s (0-based): rank r sends chunk (r-s-1) mod N and
 * receives chunk (r-s-2) mod N, adding its own values to it. After N-1 steps
 * rank r holds chunk r fully reduced (as torch's reduce_scatter gives rank r
 * chunk r).
 *
 * All-gather, step s: rank r sends chunk (r-s) mod N (starting with its own)
 * and receives chunk (r-s-1) mod N. After N-1 steps every rank has every chunk.
 */
import type { ChunkBound, TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { combineAndStore, combineInto, type CustomReduceOp, type ReduceOp } from '../reduce-op.ts';
import { asTensor, mod, region } from './common.ts';
import { keepBuffer, ownedCopy } from './message-buffers.ts';

/**
 * One ring step: moves `out` to the next rank while receiving from the
 * previous one, both with `tag` (the call's). `out` must be a buffer this
 * rank owns; it is sent without a copy and is gone afterwards. Resolves to
 * the received buffer, which this rank then owns (and may send on the same way).
 */
async function ringStep(comm: Comm, out: TypedArray, tag: number): Promise<TypedArray> {
  const next = mod(comm.rank + 1, comm.worldSize);
  const prev = mod(comm.rank - 1, comm.worldSize);
  const incoming = comm.irecv(prev, { tag });
  comm.isend(next, asTensor(out), { tag, transfer: true });
  return (await incoming.wait()).data();
}

/**
 * Ring reduce-scatter, its messages sent with `tag`. Resolves to a buffer
 * this rank owns holding chunk `rank` reduced over every rank. `data` is only
 * read, unless `writeBack`: then chunk `rank` of `data` is also overwritten
 * with the reduced chunk (as an in-place all-reduce needs), in the same pass
 * as the last combine.
 */
export async function ringReduceScatter(comm: Comm, data: TypedArray, bounds: readonly ChunkBound[], op: ReduceOp, tag: number, writeBack = false): Promise<TypedArray> {
  const { rank: r, worldSize: n } = comm;
  if (n === 1) return ownedCopy(comm, region(data, bounds[r]!));
  if (typeof op !== 'string') {
    const mine = await ringReduceScatterOrdered(comm, data, bounds, op, tag);
    if (writeBack) region(data, bounds[r]!).set(mine);
    return mine;
  }
  // Step 0 sends our own chunk r-1; every later step sends on the partial
  // result just received, with our values combined in, in the same buffer.
  let out = ownedCopy(comm, region(data, bounds[mod(r - 1, n)]!));
  for (let s = 0; s < n - 1; s++) {
    const partial = await ringStep(comm, out, tag);
    const ours = region(data, bounds[mod(r - s - 2, n)]!); // chunk r at the last step
    if (writeBack && s === n - 2) combineAndStore(op, partial, ours);
    else combineInto(op, partial, ours);
    out = partial;
  }
  return out;
}

/**
 * Ring all-gather in place, its messages sent with `tag`: rank r contributes
 * chunk r of `data`; afterwards every chunk is filled everywhere. `own`, if
 * given, is a buffer this rank owns holding chunk r: it is sent instead of a
 * copy of it (and is gone afterwards).
 */
export async function ringAllGather(comm: Comm, data: TypedArray, bounds: readonly ChunkBound[], tag: number, own?: TypedArray): Promise<void> {
  const { rank: r, worldSize: n } = comm;
  if (n === 1) return;
  let out = own ?? ownedCopy(comm, region(data, bounds[r]!));
  for (let s = 0; s < n - 1; s++) {
    const incoming = await ringStep(comm, out, tag);
    data.set(incoming, bounds[mod(r - s - 1, n)]!.start);
    out = incoming; // the chunk we send on at the next step
  }
  keepBuffer(comm, out); // the last chunk goes no further: reuse its buffer next call
}

/**
 * Reduce-scatter for a custom op that may not commute. Chunk c travels the
 * ring from rank c+1 round to rank c, meeting the ranks in the order
 * c+1, ..., N-1, 0, ..., c. To apply the op in rank order we carry two
 * partial results: H for the ranks above c (met first) and L for ranks
 * 0..c (met after the ring wraps past N-1). The owner finishes with L ∘ H.
 * Messages after the wrap carry both, so this costs up to twice the traffic
 * of the commutative ring: the price of a non-commutative op.
 */
async function ringReduceScatterOrdered(comm: Comm, data: TypedArray, bounds: readonly ChunkBound[], op: CustomReduceOp, tag: number): Promise<TypedArray> {
  const { rank: r, worldSize: n } = comm;
  // The chunk this rank starts at step 0 is c = r-1: rank r is its first rank.
  const first = mod(r - 1, n);
  let h: TypedArray | null = r > first ? region(data, bounds[first]!).slice() : null;
  let l: TypedArray | null = r > first ? null : region(data, bounds[first]!).slice();
  for (let s = 0; s < n - 1; s++) {
    const c = mod(r - s - 2, n);
    const len = bounds[c]!.end - bounds[c]!.start;
    const incoming = await ringStep(comm, concat(h, l), tag);
    const hasH = c < n - 1; // the chain started above c
    const hasL = r <= c && r > 0; // rank 0 is behind us: the chain has wrapped
    h = hasH ? incoming.slice(0, len) : null;
    l = hasL ? incoming.slice(hasH ? len : 0, (hasH ? len : 0) + len) : null;
    const mine = region(data, bounds[c]!).slice();
    if (r > c) combineInto(op, h!, mine, true);
    else if (l) combineInto(op, l, mine, true);
    else l = mine;
  }
  // Now c = r: fold the two halves in rank order into our chunk.
  if (h) combineInto(op, l!, h, true);
  return l!;
}

function concat(a: TypedArray | null, b: TypedArray | null): TypedArray {
  if (!a) return b!;
  if (!b) return a;
  const out = new (a.constructor as Float32ArrayConstructor)(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
