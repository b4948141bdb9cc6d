/**
 * Public tests of exercise 1. They run your allReduceMean on several ranks
 * in one thread (the inline backend, so breakpoints and stack traces work)
 * and compare every rank's result with the mean computed directly.
 *
 *   pnpm test ex01        run them
 *   pnpm test:ui ex01     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { randn, tensor, testing, type Tensor } from '@dtlab/tensor';
import { allReduceMean } from '../src/allreduce-mean.ts';

/** Rank r holds [r, r+1, ...] scaled per tensor: easy to average by hand. */
function inputsOf(rank: number): Tensor[] {
  return [tensor([rank, rank + 1, rank + 2, rank + 3]), tensor([[10 * rank, 1], [2, -rank]])];
}

/** The mean over `n` ranks of `inputsOf`, computed directly in one process. */
function expectedMean(n: number): number[][] {
  const all = Array.from({ length: n }, (_, r) => inputsOf(r).map((t) => t.toArray()));
  return all[0]!.map((_, i) => all[0]![i]!.map((_, k) => all.reduce((s, ts) => s + ts[i]![k]!, 0) / n));
}

/**
 * Rank r holds normal random values: their sums round differently in
 * different orders, so two ranks that add the same numbers in another order
 * end with values that differ in the last bits.
 */
function randomInputsOf(rank: number): Tensor[] {
  return [randn([64], { seed: 100 + rank }), randn([3, 5], { seed: 200 + rank })];
}

async function runMean(n: number, inputs: (rank: number) => Tensor[] = inputsOf): Promise<number[][][]> {
  const result = await launch({
    worldSize: n,
    program: async (comm: Comm) => {
      const tensors = inputs(comm.rank);
      await allReduceMean(comm, tensors);
      return tensors.map((t) => t.toArray());
    },
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return result.ranks.map((r) => r.value as number[][]);
}

describe('allReduceMean', () => {
  for (const n of [1, 2, 3, 4]) {
    it(`leaves the mean over ${n} rank(s) on every rank`, async () => {
      const got = await runMean(n);
      const want = expectedMean(n);
      got.forEach((tensors, rank) =>
        tensors.forEach((values, i) => testing.assertClose(values, want[i]!, { label: `rank ${rank}, tensors[${i}] with ${n} ranks`, rtol: 1e-6, atol: 1e-6 })),
      );
    });
  }

  it('gives every rank exactly the same values, bit for bit', async () => {
    const got = await runMean(4, randomInputsOf);
    for (let rank = 1; rank < got.length; rank++) expect(got[rank], `rank ${rank} differs from rank 0`).toEqual(got[0]);
  });
});
