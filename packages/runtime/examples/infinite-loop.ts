/**
 * A rank stuck in a synchronous infinite loop (a `while` whose condition
 * never changes). The workers backend stops it at the launch's timeout; the
 * inline backend could not (the loop would never give the thread back).
 *
 *   pnpm dtrun -n 2 --timeout 2000 packages/runtime/examples/infinite-loop.ts
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

export async function main(comm: Comm): Promise<void> {
  if (comm.rank === 0) {
    let step = 0;
    const steps = 10;
    while (step < steps) {
      // forgot step++
    }
    await comm.send(1, tensor([step]));
  } else {
    await comm.recv(0);
  }
}
