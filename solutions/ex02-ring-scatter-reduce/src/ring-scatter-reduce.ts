/**
 * Exercise 2: ring scatter-reduce (reference solution).
 *
 * What travels the ring is a partial sum, not a rank's own data. The chunk a
 * rank receives at step s, once it has added its own values, is exactly the
 * chunk the schedule makes it send at step s+1 (index r-s-2 both times). So
 * chunk c leaves rank c+1 holding one contribution, gains one per hop, and
 * reaches rank c after N-1 hops holding all N. Sending one's own untouched
 * chunk at every step instead (the starter) leaves every chunk with only two
 * contributions: right for N = 2, wrong from N = 3 on, with the same traffic.
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
  for (let step = 0; step < worldSize - 1; step++) {
    // At step 0 this is our own chunk r-1; from then on it is the partial sum
    // we received, and added to, one step earlier.
    const incoming = await comm.sendRecv(next, chunk(rank - step - 1), prev);
    noGrad(() => chunk(rank - step - 2).add_(incoming));
  }
  // The last chunk received, r - (N-2) - 2 = r - N, is our own, now with all N contributions.
  return chunk(rank).clone();
}
