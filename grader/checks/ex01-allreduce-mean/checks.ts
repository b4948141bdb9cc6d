/**
 * Public checks of ex01-allreduce-mean. Each runs the submission's
 * allReduceMean on N rank workers with seeded inputs and compares every
 * rank's result with the exact mean computed here.
 */
import type { Tensor } from '@dtlab/tensor';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { expectedMeans } from './data.ts';

const ENTRY = 'src/allreduce-mean.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'meanOfRanks' };

/** Runs the submission on `worldSize` ranks; what every rank's tensors hold afterwards. */
async function runMeans(ctx: CheckContext, worldSize: number, shapes: number[][], seed: number): Promise<Tensor[][]> {
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), seed, shapes], returns: { array: 'tensor', length: shapes.length } });
  return result.ranks.map((r) => r.value as Tensor[]);
}

/** Compares every rank's tensors with the exact means (float32 rounding allowed). */
function expectMeans(ctx: CheckContext, outputs: Tensor[][], shapes: number[][], seed: number): void {
  const worldSize = outputs.length;
  const expected = expectedMeans(seed, worldSize, shapes);
  outputs.forEach((tensors, rank) => {
    tensors.forEach((t, i) => ctx.expectClose(t, expected[i]!, { rank, label: `tensors[${i}] (shape [${shapes[i]!.join(',')}]) with ${worldSize} rank${worldSize === 1 ? '' : 's'}`, rtol: 1e-6, atol: 1e-6 }));
  });
}

/** Runs the submission on `worldSize` ranks and compares every rank's tensors with the exact means. */
export async function checkMeans(ctx: CheckContext, worldSize: number, shapes: number[][], seed: number): Promise<Tensor[][]> {
  const outputs = await runMeans(ctx, worldSize, shapes, seed);
  expectMeans(ctx, outputs, shapes, seed);
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
    // Values whose sums round differently in different orders (see rankTensors): replicas that
    // add in another order on each rank differ in the last bits, and data-parallel replicas must not.
    const shapes = [[64], [3, 5]];
    const outputs = await runMeans(ctx, 4, shapes, ctx.seedFor('data'));
    outputs.slice(1).forEach((tensors, k) => tensors.forEach((t, i) => ctx.expectEqual(t, outputs[0]![i]!, { rank: k + 1, label: `tensors[${i}] compared with rank 0's, bit for bit` })));
    // The same values everywhere, and the mean: a wrong value on every rank alike is still wrong.
    expectMeans(ctx, outputs, shapes, ctx.seedFor('data'));
    ctx.note('4 ranks: every rank holds bit for bit the same values, and they are the mean');
  },
};
