/**
 * A ring pass: every rank sends its rank number to the next rank and
 * receives from the previous one, N times, adding as it goes. After N steps
 * each rank has seen every rank's number once: the sum 0 + 1 + ... + N-1.
 *
 *   pnpm dtrun -n 4 packages/runtime/examples/ring.ts
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

export async function main(comm: Comm): Promise<number> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  let passing = tensor([comm.rank]);
  let total = 0;
  for (let step = 0; step < comm.worldSize; step++) {
    total += passing.item();
    passing = await comm.sendRecv(next, passing, prev);
  }
  console.log(`rank ${comm.rank} of ${comm.worldSize}: sum of all ranks = ${total}`);
  return total;
}
