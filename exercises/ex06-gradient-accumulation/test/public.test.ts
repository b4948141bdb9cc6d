/**
 * Public tests of exercise 6. They run your accumulateGradients on two ranks
 * in one thread (the inline backend, so breakpoints work), each rank with
 * its own micro-batches, and compare the gradients with one process on the
 * step's whole batch; then they count the collective calls of a step in the
 * trace.
 *
 *   pnpm test ex06        run them
 *   pnpm test:ui ex06     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { COLLECTIVE_TAG } from '@dtlab/collectives';
import { launch, type Comm, type LaunchResult } from '@dtlab/runtime';
import { Generator, Tensor, deriveSeed, nn, tensor, testing } from '@dtlab/tensor';
import { accumulateGradients, type MicroBatch } from '../src/gradient-accumulation.ts';

const SIZES = [6, 12, 4];
const model = () => new nn.MLP(SIZES, { seed: 3, activation: 'tanh' });

/** Micro-batch i of rank r, of n examples (a seed per (rank, micro-batch), so that no two are alike). */
function microBatch(rank: number, i: number, n: number): MicroBatch {
  const gen = new Generator(deriveSeed(11, rank, i));
  const x = Array.from({ length: n }, () => Array.from({ length: SIZES[0]! }, () => gen.normal()));
  return { x: tensor(x, { shape: [n, SIZES[0]!] }), y: x.map(() => gen.int(SIZES.at(-1)!)) };
}

/** Runs your accumulateGradients once; lengths[r] are rank r's micro-batch lengths. Every rank's gradients, and the launch. */
async function accumulateOnRanks(lengths: number[][]): Promise<{ grads: number[][]; result: LaunchResult }> {
  const result = await launch({
    worldSize: lengths.length,
    timeoutMs: 20_000,
    program: async (comm: Comm) => {
      const m = model();
      await accumulateGradients(comm, m, lengths[comm.rank]!.map((n, i) => microBatch(comm.rank, i, n)));
      return m.parameters().flatMap((p) => p.grad!.toArray());
    },
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { grads: result.ranks.map((r) => r.value as number[]), result };
}

/** One process: the gradient of the mean loss over every example of every rank's micro-batches. */
function singleProcess(lengths: number[][]): number[] {
  const m = model();
  const all = lengths.flatMap((l, r) => l.map((n, i) => microBatch(r, i, n)));
  nn.crossEntropy(m.forward(Tensor.cat(all.map((b) => b.x))), all.flatMap((b) => b.y)).backward();
  return m.parameters().flatMap((p) => p.grad!.toArray());
}

describe('accumulateGradients', () => {
  const cases: [string, number[][]][] = [
    ['micro-batches of equal lengths', [[3, 3, 3], [3, 3, 3]]],
    ['micro-batches of different lengths', [[5, 2, 1], [1, 3, 4]]],
    ['one micro-batch of one example beside a long one', [[1, 7], [4, 4]]],
  ];
  for (const [what, lengths] of cases) {
    it(`leaves the gradient of the mean over all examples, with ${what}`, async () => {
      const { grads } = await accumulateOnRanks(lengths);
      const want = singleProcess(lengths);
      grads.forEach((g, rank) => testing.assertClose(g, want, { label: `rank ${rank}'s gradients (all, end to end), lengths ${JSON.stringify(lengths)}`, rtol: 1e-5, atol: 1e-7 }));
    });
  }

  it('exchanges the gradients once per step, in one all-reduce', async () => {
    const { result } = await accumulateOnRanks([[2, 2, 1, 3], [1, 1, 4, 2]]);
    const calls = new Set(result.trace.filter((e) => e.tag >= COLLECTIVE_TAG).map((e) => e.tag));
    expect(calls.size, 'collective calls in a step of 4 micro-batches').toBe(1);
  });
});
