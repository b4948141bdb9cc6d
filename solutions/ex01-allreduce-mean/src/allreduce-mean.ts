/**
 * Exercise 1: all-reduce mean (reference solution).
 *
 * Every rank sends each tensor to every other rank, then adds all N
 * contributions in rank order (so that every rank performs the same
 * floating-point operations and gets the bitwise-same result) and divides
 * once by N. Pairwise averaging ("the mean of two numbers is their sum over
 * two") is wrong for N > 2: it weights the last contribution by 1/2, the one
 * before by 1/4, and so on.
 */
import { noGrad, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

/**
 * Replaces every tensor in `tensors`, on every rank, by its mean over all
 * ranks: afterwards `tensors[i]` holds (x_0[i] + x_1[i] + ... + x_{N-1}[i]) / N
 * on every rank, where x_r is rank r's list. All ranks pass lists of the same
 * length with the same shapes. Modify the tensors in place (they are, for
 * example, the `.grad` of a model's parameters).
 */
export async function allReduceMean(comm: Comm, tensors: Tensor[]): Promise<void> {
  const { rank, worldSize } = comm;
  // Post every send first: sends are buffered, so no rank waits on another here.
  for (let peer = 0; peer < worldSize; peer++) {
    if (peer === rank) continue;
    for (const [i, t] of tensors.entries()) comm.isend(peer, t, { tag: i });
  }
  for (const [i, t] of tensors.entries()) {
    // Everyone's contribution to tensor i, indexed by rank.
    const parts = await Promise.all(Array.from({ length: worldSize }, (_, r) => (r === rank ? t.detach() : comm.recv(r, { tag: i }))));
    noGrad(() => {
      // Summing in rank order, not arrival order, makes every rank's result identical.
      let sum = parts[0]!.clone();
      for (let r = 1; r < worldSize; r++) sum = sum.add(parts[r]!);
      t.copy_(sum.div(worldSize));
    });
  }
}
