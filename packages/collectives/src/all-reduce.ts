/**
 * `allReduce`: every rank ends with the reduction of every rank's tensor,
 * written in place (torch.distributed.all_reduce).
 */
import type { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { dense } from './dense.ts';
import { checkOp, finish, itemSize, opFields, type ReduceOp } from './reduce-op.ts';
import { itemBounds } from './algorithms/common.ts';
import { ringAllGather, ringReduceScatter } from './algorithms/ring.ts';
import { treeBroadcast, treeReduce } from './algorithms/tree.ts';
import { naiveAllReduce } from './algorithms/naive.ts';
import { announce, checkTensor } from './call.ts';

/** All-reduce algorithms: see the package README for step tables and costs. */
export type AllReduceAlgorithm = 'ring' | 'naive' | 'tree';

/** Options of `allReduce`. */
export interface AllReduceOptions {
  /** Reduce op. Default 'sum'. */
  op?: ReduceOp;
  /**
   * 'ring' (reduce-scatter then all-gather, the default), 'naive' (everyone
   * sends everything to everyone) or 'tree' (binomial-tree reduce to rank 0,
   * then binomial-tree broadcast).
   */
  algorithm?: AllReduceAlgorithm;
}

/** Reduces `t` across all ranks, in place; resolves to `t`. */
export async function allReduce(comm: Comm, t: Tensor, opts: AllReduceOptions = {}): Promise<Tensor> {
  checkTensor('allReduce', comm, t);
  const op = checkOp('allReduce', comm, opts.op ?? 'sum', t.numel);
  const algorithm = opts.algorithm ?? 'ring';
  if (!['ring', 'naive', 'tree'].includes(algorithm)) throw new TypeError(`rank ${comm.rank}: allReduce: algorithm must be 'ring', 'naive' or 'tree', got ${JSON.stringify(algorithm)}`);
  const tag = announce(comm, { op: 'allReduce', count: t.numel, dtype: t.dtype, ...opFields(op), algorithm });
  const buf = dense(t);
  if (comm.worldSize > 1) {
    if (algorithm === 'ring') {
      const bounds = itemBounds(t.numel, comm.worldSize, itemSize(op));
      const mine = await ringReduceScatter(comm, buf.data, bounds, op, tag, true); // also writes our reduced chunk into buf.data
      await ringAllGather(comm, buf.data, bounds, tag, mine); // sends `mine` on without another copy
    } else if (algorithm === 'tree') {
      await treeReduce(comm, buf.data, op, 0, tag);
      await treeBroadcast(comm, buf.data, 0, tag);
    } else {
      await naiveAllReduce(comm, buf.data, op, tag);
    }
  }
  finish(op, buf.data, comm.worldSize);
  buf.commit();
  return t;
}
