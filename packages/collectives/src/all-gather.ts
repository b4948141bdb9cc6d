/**
 * `allGather`: every rank ends with every rank's tensor, concatenated in
 * rank order along dim 0 (ring algorithm).
 */
import { Tensor, allocate, type TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { boundsFromCounts } from './algorithms/common.ts';
import { ringAllGather } from './algorithms/ring.ts';
import { announce, checkTensor } from './call.ts';

/** Options of `allGather`. */
export interface AllGatherOptions {
  /**
   * Element counts of every rank's tensor, for uneven sizes (like
   * MPI_Allgatherv). The result is then 1-D. Without it, all tensors must
   * have the same shape, and the result stacks them along dim 0.
   */
  counts?: readonly number[];
}

/** Resolves to the concatenation of every rank's `t`; `t` is not modified. */
export async function allGather(comm: Comm, t: Tensor, opts: AllGatherOptions = {}): Promise<Tensor> {
  checkTensor('allGather', comm, t);
  const n = comm.worldSize;
  const counts = opts.counts;
  if (counts !== undefined) {
    if (!Array.isArray(counts) || counts.length !== n || counts.some((c) => !Number.isInteger(c) || c < 0)) {
      throw new RangeError(`rank ${comm.rank}: allGather: counts must list ${n} non-negative integers (one per rank), got ${JSON.stringify(counts)}`);
    }
    if (counts[comm.rank] !== t.numel) {
      throw new RangeError(`rank ${comm.rank}: allGather: counts[${comm.rank}] is ${counts[comm.rank]} but this rank's tensor has ${t.numel} elements`);
    }
  }
  const tag = announce(comm, { op: 'allGather', dtype: t.dtype, ...(counts ? { counts: counts.join(',') } : { shape: t.shape.join(',') }) });
  const sizes = counts ?? new Array<number>(n).fill(t.numel);
  const bounds = boundsFromCounts(sizes);
  const out: TypedArray = allocate(t.dtype, bounds[n - 1]!.end);
  out.set(t.data(), bounds[comm.rank]!.start);
  await ringAllGather(comm, out, bounds, tag);
  const shape = counts ? [out.length] : t.ndim === 0 ? [n] : [n * t.shape[0]!, ...t.shape.slice(1)];
  return Tensor._fromData(out, shape);
}
