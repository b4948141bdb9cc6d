/**
 * Binomial-tree algorithms. In round k (k = 0, 1, ...), a rank whose
 * relative rank v has bit k set sends its partial result to v - 2^k and
 * drops out; after ceil(log2 N) rounds the root holds the reduction. After a
 * round k, rank v holds ranks [v, v + 2^(k+1)) combined in order, so a
 * non-commutative op comes out in rank order when the root is rank 0.
 * Broadcast runs the same tree backwards, farthest subtree first.
 */
import type { TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { combineInto, type ReduceOp } from '../reduce-op.ts';
import { mod, recvData, sendData } from './common.ts';

/** Reduces every rank's `data` into `root`'s `data` (others' `data` then hold partial results). */
export async function treeReduce(comm: Comm, data: TypedArray, op: ReduceOp, root: number, tag: number): Promise<void> {
  const { rank, worldSize: n } = comm;
  const v = mod(rank - root, n);
  for (let mask = 1; mask < n; mask <<= 1) {
    if (v & mask) {
      sendData(comm, mod(v - mask + root, n), data, tag);
      return;
    }
    if (v + mask < n) combineInto(op, data, await recvData(comm, mod(v + mask + root, n), tag), true);
  }
}

/** Copies `root`'s `data` into every rank's `data`. */
export async function treeBroadcast(comm: Comm, data: TypedArray, root: number, tag: number): Promise<void> {
  const { rank, worldSize: n } = comm;
  const v = mod(rank - root, n);
  let top = 1;
  while (top < n) top <<= 1;
  const low = v === 0 ? top : v & -v; // the bit by which our parent reached us
  if (v !== 0) data.set(await recvData(comm, mod(v - low + root, n), tag));
  for (let mask = low >> 1; mask >= 1; mask >>= 1) {
    if (v + mask < n) sendData(comm, mod(v + mask + root, n), data, tag);
  }
}
