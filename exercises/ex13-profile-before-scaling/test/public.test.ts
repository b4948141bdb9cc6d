/**
 * Public tests of exercise 13. They run your sumOverRanks on several
 * ranks in one thread (the inline backend, so breakpoints and stack traces
 * work) and compare every rank's result with the sum computed directly.
 *
 *   pnpm test ex13        run them
 *   pnpm test:ui ex13     open them in the vitest UI
 */
import { describe, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { tensor, testing, type Tensor } from '@dtlab/tensor';
import { sumOverRanks } from '../src/profile-before-scaling.ts';

/** Rank r holds (i + 1)·10^r at index i: each decimal digit of a sum counts one rank's contribution. */
function inputOf(rank: number, n: number): Tensor {
  return tensor(Array.from({ length: n }, (_, i) => (i + 1) * 10 ** rank));
}

/** The sum over `worldSize` ranks of `inputOf`, computed directly in one process. */
function expectedSum(worldSize: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: worldSize }, (_, r) => (i + 1) * 10 ** r).reduce((a, b) => a + b, 0));
}

async function runSum(worldSize: number, n: number): Promise<number[][]> {
  const result = await launch({
    worldSize,
    program: async (comm: Comm) => (await sumOverRanks(comm, inputOf(comm.rank, n))).toArray(),
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return result.ranks.map((r) => r.value as number[]);
}

describe('sumOverRanks', () => {
  for (const worldSize of [1, 2, 3, 4]) {
    it(`leaves the sum over ${worldSize} rank(s) on every rank`, async () => {
      const got = await runSum(worldSize, 5);
      const want = expectedSum(worldSize, 5);
      got.forEach((values, rank) => testing.assertClose(values, want, { label: `rank ${rank}'s sum with ${worldSize} ranks`, rtol: 0, atol: 0 }));
    });
  }
});
