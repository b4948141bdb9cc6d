/**
 * `reduce`: the reduction of every rank's tensor, written into the tensor
 * of rank `dst` (binomial tree). Other ranks' tensors are left unchanged.
 */
import type { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { dense } from './dense.ts';
import { checkOp, finish, opFields, type ReduceOp } from './reduce-op.ts';
import { treeReduce } from './algorithms/tree.ts';
import { recvData, sendData } from './algorithms/common.ts';
import { announce, checkRoot, checkTensor } from './call.ts';

/** Options of `reduce`. */
export interface ReduceOptions {
  /** The rank that receives the result. Default 0. */
  dst?: number;
  /** Reduce op. Default 'sum'. */
  op?: ReduceOp;
}

/** Reduces `t` across ranks into `dst`'s `t`; resolves to `t`. */
export async function reduce(comm: Comm, t: Tensor, opts: ReduceOptions = {}): Promise<Tensor> {
  checkTensor('reduce', comm, t);
  const dst = checkRoot('reduce', comm, opts.dst, 'dst');
  const op = checkOp('reduce', comm, opts.op ?? 'sum', t.numel);
  const tag = announce(comm, { op: 'reduce', count: t.numel, dtype: t.dtype, ...opFields(op), dst });
  const buf = dense(t);
  // Non-root ranks work on a copy: the tree leaves partial results behind.
  const work = comm.rank === dst ? buf.data : buf.data.slice();
  if (typeof op === 'string' || dst === 0) {
    await treeReduce(comm, work, op, dst, tag);
  } else {
    // A custom op comes out in rank order only from a tree rooted at rank 0.
    await treeReduce(comm, work, op, 0, tag);
    if (comm.rank === 0) sendData(comm, dst, work, tag);
    if (comm.rank === dst) work.set(await recvData(comm, 0, tag));
  }
  if (comm.rank === dst) {
    finish(op, work, comm.worldSize);
    buf.commit();
  }
  return t;
}
