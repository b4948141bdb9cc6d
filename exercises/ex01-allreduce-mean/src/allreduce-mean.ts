/**
 * Exercise 1: all-reduce mean.
 *
 * In data-parallel training every rank computes gradients on its own slice
 * of the batch; before the optimizer step, every rank must hold the mean of
 * all ranks' gradients, so that all ranks take the same step.
 *
 * Implement that mean with point-to-point messages only (comm.send,
 * comm.recv, comm.isend, comm.irecv, comm.sendRecv). See README.md.
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
  // Everyone needs everyone else's values: send ours to every other rank.
  // (Sends are buffered and copy the tensor, so changing it later is safe.)
  for (let peer = 0; peer < comm.worldSize; peer++) {
    if (peer === comm.rank) continue;
    for (const [i, t] of tensors.entries()) await comm.send(peer, t, { tag: i });
  }
  // Fold each peer's tensor into ours. The mean of two numbers is their sum
  // over two, so averaging each arriving value into the running mean keeps
  // it a mean all the way.
  for (let peer = 0; peer < comm.worldSize; peer++) {
    if (peer === comm.rank) continue;
    for (const [i, t] of tensors.entries()) {
      const theirs = await comm.recv(peer, { tag: i });
      noGrad(() => t.add_(theirs).mul_(0.5));
    }
  }
}
