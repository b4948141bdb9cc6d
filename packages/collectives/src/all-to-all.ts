/**
 * `allToAll`: rank r sends its i-th tensor to rank i and receives rank i's
 * r-th tensor, by pairwise exchange: in step s = 1..N-1, send to r+s and
 * receive from r-s, so each step is a permutation with no hot spot.
 */
import type { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { mod } from './algorithms/common.ts';
import { announce, checkTensor } from './call.ts';

/** `inputs[i]` goes to rank i; resolves to `outputs` with `outputs[i]` from rank i. */
export async function allToAll(comm: Comm, inputs: readonly Tensor[]): Promise<Tensor[]> {
  const { rank: r, worldSize: n } = comm;
  if (!Array.isArray(inputs) || inputs.length !== n) {
    throw new RangeError(`rank ${r}: allToAll: inputs must hold ${n} tensors (one per rank), got ${Array.isArray(inputs) ? inputs.length : String(inputs)}`);
  }
  inputs.forEach((t, i) => checkTensor('allToAll', comm, t, `inputs[${i}]`));
  const tag = announce(comm, { op: 'allToAll', dtype: inputs[0]!.dtype });
  const out: Tensor[] = new Array(n);
  out[r] = inputs[r]!.clone().detach();
  for (let s = 1; s < n; s++) {
    const from = comm.irecv(mod(r - s, n), { tag });
    comm.isend(mod(r + s, n), inputs[mod(r + s, n)]!, { tag });
    out[mod(r - s, n)] = await from.wait();
  }
  return out;
}
