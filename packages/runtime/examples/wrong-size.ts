/**
 * Receiving into a buffer of the wrong size: rank 0 sends 10 elements, rank 1
 * receives into a tensor of 8 (an off-by-one in a chunk size computation).
 *
 *   pnpm dtrun -n 2 packages/runtime/examples/wrong-size.ts
 */
import { arange, zeros } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

export async function main(comm: Comm): Promise<void> {
  if (comm.rank === 0) await comm.send(1, arange(10));
  else await comm.recv(0, { into: zeros([8]) });
}
