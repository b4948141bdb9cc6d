/**
 * `broadcast`: copies the tensor of rank `src` into every rank's tensor, in
 * place (binomial tree: ceil(log2 N) rounds).
 */
import type { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { dense } from './dense.ts';
import { treeBroadcast } from './algorithms/tree.ts';
import { announce, checkRoot, checkTensor } from './call.ts';

/** Options of `broadcast`. */
export interface BroadcastOptions {
  /** The rank whose tensor is copied. Default 0. */
  src?: number;
}

/** Overwrites `t` on every rank with `src`'s `t`; resolves to `t`. */
export async function broadcast(comm: Comm, t: Tensor, opts: BroadcastOptions = {}): Promise<Tensor> {
  checkTensor('broadcast', comm, t);
  const src = checkRoot('broadcast', comm, opts.src, 'src');
  const tag = announce(comm, { op: 'broadcast', count: t.numel, dtype: t.dtype, src });
  const buf = dense(t);
  await treeBroadcast(comm, buf.data, src, tag);
  if (comm.rank !== src) buf.commit();
  return t;
}
