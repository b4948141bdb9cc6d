/**
 * Exercise 13: Profile one worker before adding more (reference solution).
 *
 * A value moves one hop per step around the ring, so reaching every rank
 * takes N-1 steps, and at each step a rank passes on what it received (not
 * its own value again). The starter's single exchange leaves rank r with
 * x_r + x_(r-1) only: right for two ranks, wrong from three on.
 */
import { noGrad, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

/**
 * Resolves, on every rank, to a new tensor holding x_0 + x_1 + ... + x_{N-1},
 * the elementwise sum of every rank's `x` (all ranks pass the same shape).
 * Send only to the next rank, (rank + 1) mod N, and receive only from the
 * previous one, (rank - 1 + N) mod N.
 */
export async function sumOverRanks(comm: Comm, x: Tensor): Promise<Tensor> {
  const { rank, worldSize } = comm;
  const sum = x.clone();
  const next = (rank + 1) % worldSize;
  const prev = (rank - 1 + worldSize) % worldSize;
  // After step s, `passing` is rank (r - s - 1)'s value: every value visits every rank once.
  let passing = x;
  for (let step = 0; step < worldSize - 1; step++) {
    passing = await comm.sendRecv(next, passing, prev);
    const arrived = passing;
    noGrad(() => sum.add_(arrived));
  }
  return sum;
}
