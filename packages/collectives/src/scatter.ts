/**
 * `scatter`: rank `src` holds one tensor per rank and sends each rank its
 * own (directly, one message per rank).
 */
import type { Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { announce, checkRoot, checkTensor } from './call.ts';

/** Options of `scatter`. */
export interface ScatterOptions {
  /** The rank that holds the tensors. Default 0. */
  src?: number;
}

/**
 * `chunks` (on `src` only: one tensor per rank, in rank order; null
 * elsewhere). Resolves to this rank's tensor (a copy).
 */
export async function scatter(comm: Comm, chunks: readonly Tensor[] | null, opts: ScatterOptions = {}): Promise<Tensor> {
  const src = checkRoot('scatter', comm, opts.src, 'src');
  if (comm.rank === src) {
    if (!Array.isArray(chunks) || chunks.length !== comm.worldSize) {
      throw new RangeError(`rank ${comm.rank}: scatter: chunks must hold ${comm.worldSize} tensors (one per rank) on the src rank, got ${Array.isArray(chunks) ? chunks.length : String(chunks)}`);
    }
    chunks.forEach((c, i) => checkTensor('scatter', comm, c, `chunks[${i}]`));
  }
  const tag = announce(comm, { op: 'scatter', src });
  if (comm.rank !== src) return comm.recv(src, { tag });
  chunks!.forEach((c, r) => {
    if (r !== src) comm.isend(r, c, { tag });
  });
  return chunks![src]!.clone().detach();
}
