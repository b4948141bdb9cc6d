/**
 * Public checks of ex01-allreduce-mean. Each runs the submission's
 * allReduceMean on N rank workers with seeded inputs and compares every
 * rank's result with the exact mean computed here.
 */
import type { Tensor } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { programPath } from '@dtlab/grader/program';
import { expectedMeans } from './data.ts';

const ENTRY = 'src/allreduce-mean.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'meanOfRanks' };

/** Runs the submission on `worldSize` ranks and compares every rank's tensors with the exact means. */
export async function checkMeans(ctx: CheckContext, worldSize: number, shapes: number[][], seed: number): Promise<Tensor[][]> {
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), seed, shapes] });
  const expected = expectedMeans(seed, worldSize, shapes);
  const outputs = result.ranks.map((r) => r.value as Tensor[]);
  outputs.forEach((tensors, rank) => {
    if (!Array.isArray(tensors) || tensors.length !== shapes.length) ctx.fail(`rank ${rank} returned ${Array.isArray(tensors) ? tensors.length : 'no'} tensors, expected ${shapes.length}`);
    tensors.forEach((t, i) => ctx.expectClose(t, expected[i]!, { rank, label: `tensors[${i}] (shape [${shapes[i]!.join(',')}]) with ${worldSize} ranks`, rtol: 1e-6, atol: 1e-6 }));
  });
  return outputs;
}

export const checks: Record<string, CheckFn> = {
  'two-ranks': async (ctx) => {
    await checkMeans(ctx, 2, [[4], [2, 3]], ctx.seedFor('data'));
  },
  'three-ranks': async (ctx) => {
    await checkMeans(ctx, 3, [[5], [3, 2], [1]], ctx.seedFor('data'));
  },
  'ranks-agree': async (ctx) => {
    const outputs = await checkMeans(ctx, 4, [[6]], ctx.seedFor('data'));
    // Beyond being close to the mean, data-parallel ranks must hold the same values.
    outputs.slice(1).forEach((tensors, k) => ctx.expectClose(tensors[0]!, outputs[0]![0]!, { rank: k + 1, label: `tensors[0] compared with rank 0's`, rtol: 0, atol: 0 }));
  },
};
