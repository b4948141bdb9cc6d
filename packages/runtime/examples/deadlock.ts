/**
 * A classic deadlock: every rank receives from its neighbour before sending,
 * so every rank waits for a message that is only sent after a wait ends.
 *
 *   pnpm dtrun -n 3 packages/runtime/examples/deadlock.ts
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

export async function main(comm: Comm): Promise<void> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  const got = await comm.recv(prev);
  await comm.send(next, got.add(tensor([comm.rank])));
}
