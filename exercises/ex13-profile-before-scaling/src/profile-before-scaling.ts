/**
 * Exercise 13: Profile one worker before adding more.
 *
 * Every rank holds a tensor, and every rank must end with the sum over all
 * ranks, talking only to its ring neighbours. See README.md.
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
  if (worldSize === 1) return sum;
  const next = (rank + 1) % worldSize;
  const prev = (rank - 1 + worldSize) % worldSize;
  // Everybody sends and everybody receives, so every value gets somewhere:
  // pass our value to the next rank and add the one the previous rank passes us.
  const theirs = await comm.sendRecv(next, x, prev);
  noGrad(() => sum.add_(theirs));
  return sum;
}
