/** Rank programs for the workers-backend mismatch test: each rank runs in its own worker. */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce, broadcast } from '../../src/index.ts';

/** Every rank calls allReduce on 8 elements, except rank 1, which calls broadcast from rank 0. */
export async function broadcastAmongAllReduces(comm: Comm): Promise<void> {
  const t = tensor(new Float32Array(8).fill(comm.rank));
  if (comm.rank === 1) await broadcast(comm, t, { src: 0 });
  else await allReduce(comm, t);
}
