/**
 * A rank that throws: rank 2 fails before it passes the ring's message on.
 * Rank 3, waiting for rank 2, fails with RankFailedError; rank 0, waiting
 * for rank 3, fails too, and its report names rank 2, where it started.
 *
 *   pnpm dtrun -n 4 packages/runtime/examples/rank-throws.ts
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

export async function main(comm: Comm): Promise<number> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  if (comm.rank === 2) throw new Error('rank 2 found a NaN in its gradient');
  // Rank 0 starts the ring; every other rank passes on what it got, plus its rank.
  const got = comm.rank === 0 ? tensor([0]) : await comm.recv(prev);
  await comm.send(next, got.add(comm.rank));
  return comm.rank === 0 ? (await comm.recv(prev)).item() : got.item();
}
