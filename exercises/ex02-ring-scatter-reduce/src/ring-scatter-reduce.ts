/**
 * Exercise 2: ring scatter-reduce.
 *
 * The first half of ring all-reduce. The ranks stand in a ring r -> r+1. In
 * each of N-1 steps every rank sends one chunk of its buffer to the next rank
 * and receives one chunk from the previous rank. Afterwards rank r holds
 * chunk r summed over all ranks, and each rank has sent only (N-1)/N of its
 * buffer, however many ranks there are.
 *
 * Implement it with messages to the ring neighbours only (comm.sendRecv, or
 * comm.isend and comm.irecv). See README.md for the schedule.
 */
import { chunkBounds, noGrad, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

/** `a` mod `n` in [0, n), also for negative `a`. */
const mod = (a: number, n: number): number => ((a % n) + n) % n;

/**
 * The scatter-reduce phase of ring all-reduce (torch's reduce_scatter, with
 * a sum). Every rank passes a 1-D float32 `data` of the same length n, split
 * into N = comm.worldSize chunks by `chunkBounds(n, N)`. Afterwards rank r
 * holds chunk r of the elementwise sum over all ranks:
 *
 *   result[i] = x_0[start + i] + x_1[start + i] + ... + x_{N-1}[start + i]
 *
 * where x_q is rank q's `data` and { start, end } = chunkBounds(n, N)[r].
 * Messages go only to the next rank in the ring, (r+1) mod N: N-1 steps, one
 * chunk per step. `data` may be overwritten. Resolves to a new 1-D tensor of
 * end - start elements.
 */
export async function ringScatterReduce(comm: Comm, data: Tensor): Promise<Tensor> {
  const { rank, worldSize } = comm;
  const bounds = chunkBounds(data.numel, worldSize);
  /** Chunk c (taken mod N) of `data`, as a view: writing into it writes into `data`. */
  const chunk = (c: number): Tensor => {
    const { start, end } = bounds[mod(c, worldSize)]!;
    return data.slice(0, start, end);
  };
  const next = mod(rank + 1, worldSize);
  const prev = mod(rank - 1, worldSize);
  // What this rank has reduced so far, by chunk index.
  const sums = new Map<number, Tensor>();
  for (let step = 0; step < worldSize - 1; step++) {
    const sendIdx = mod(rank - step - 1, worldSize);
    const recvIdx = mod(rank - step - 2, worldSize);
    // Pass our values of chunk sendIdx on, and take the previous rank's values of chunk recvIdx.
    const theirs = await comm.sendRecv(next, chunk(sendIdx), prev);
    // Reduce them with ours. `data` itself stays as it came: it is this rank's
    // contribution, and every rank's contribution has to reach the chunk's
    // owner, so our contribution is what we keep sending.
    sums.set(recvIdx, noGrad(() => chunk(recvIdx).add(theirs)));
  }
  // The chunk received at the last step, r - (N-2) - 2 = r - N, is our own.
  return sums.get(rank) ?? chunk(rank).clone();
}
