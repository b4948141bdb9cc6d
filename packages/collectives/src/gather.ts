/**
 * `gather`: rank `dst` receives every rank's tensor (each rank sends
 * directly to `dst`).
 */
import { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { announce, checkRoot, checkTensor } from './call.ts';

/** Options of `gather`. */
export interface GatherOptions {
  /** The rank that receives the tensors. Default 0. */
  dst?: number;
}

/** On `dst`, resolves to every rank's tensor in rank order (copies); elsewhere to null. */
export async function gather(comm: Comm, t: Tensor, opts: GatherOptions = {}): Promise<Tensor[] | null> {
  checkTensor('gather', comm, t);
  const dst = checkRoot('gather', comm, opts.dst, 'dst');
  const tag = announce(comm, { op: 'gather', shape: t.shape.join(','), dtype: t.dtype, dst });
  if (comm.rank !== dst) {
    comm.isend(dst, t, { tag });
    return null;
  }
  const works = Array.from({ length: comm.worldSize }, (_, r) => (r === dst ? null : comm.irecv(r, { tag })));
  return Promise.all(works.map((w) => (w ? w.wait() : Promise.resolve(t.clone().detach()))));
}
