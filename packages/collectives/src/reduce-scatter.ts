/**
 * `reduceScatter`: the reduction of every rank's tensor, split into N chunks
 * under the uneven-split rule; rank r gets chunk r (ring algorithm).
 */
import { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { checkOp, finish, itemSize, opFields, type ReduceOp } from './reduce-op.ts';
import { itemBounds } from './algorithms/common.ts';
import { ringReduceScatter } from './algorithms/ring.ts';
import { announce, checkTensor } from './call.ts';

/** Options of `reduceScatter`. */
export interface ReduceScatterOptions {
  /** Reduce op. Default 'sum'. */
  op?: ReduceOp;
}

/**
 * Resolves to this rank's chunk of the reduction, a new 1-D tensor of
 * `chunkBounds(t.numel, N)[rank]` elements. `t` (read flat) is not modified.
 */
export async function reduceScatter(comm: Comm, t: Tensor, opts: ReduceScatterOptions = {}): Promise<Tensor> {
  checkTensor('reduceScatter', comm, t);
  const op = checkOp('reduceScatter', comm, opts.op ?? 'sum', t.numel);
  const tag = announce(comm, { op: 'reduceScatter', count: t.numel, dtype: t.dtype, ...opFields(op) });
  const bounds = itemBounds(t.numel, comm.worldSize, itemSize(op));
  // The ring only reads its input, and resolves to a buffer of our own: no copies needed here.
  const mine = await ringReduceScatter(comm, t.data(), bounds, op, tag);
  finish(op, mine, comm.worldSize);
  return Tensor._fromData(mine, [mine.length]);
}
