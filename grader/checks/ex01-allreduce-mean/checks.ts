/**
 * Public checks of ex01-allreduce-mean. Each runs the submission's
 * allReduceMean on N rank workers with seeded inputs and compares every
 * rank's result with the exact mean computed here.
 */
import type { Tensor } from '@dtlab/tensor';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { expectedMeans, rankTensors } from './data.ts';

const ENTRY = 'src/allreduce-mean.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'meanOfRanks' };

/** Runs the submission on `worldSize` ranks; what every rank's tensors hold afterwards. */
async function runMeans(ctx: CheckContext, worldSize: number, shapes: number[][], seed: number): Promise<Tensor[][]> {
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), seed, shapes], returns: { array: 'tensor', length: shapes.length } });
  return result.ranks.map((r) => r.value as Tensor[]);
}

/**
 * Compares every rank's tensors with the exact means (float32 rounding
 * allowed). A tensor that still holds the rank's own input was never
 * written: the message says so (new tensors put in the list instead).
 */
function expectMeans(ctx: CheckContext, outputs: Tensor[][], shapes: number[][], seed: number): void {
  const worldSize = outputs.length;
  const expected = expectedMeans(seed, worldSize, shapes);
  outputs.forEach((tensors, rank) => {
    const inputs = rankTensors(seed, rank, shapes);
    tensors.forEach((t, i) => {
      const label = `tensors[${i}] (shape [${shapes[i]!.join(',')}]) with ${worldSize} rank${worldSize === 1 ? '' : 's'}`;
      const mine = inputs[i]!.data();
      const untouched = worldSize > 1 && t.numel > 0 && t.numel === mine.length && t.data().every((v, k) => Object.is(v, mine[k]));
      if (untouched) ctx.note(`rank ${rank}, ${label} still holds this rank's own input: the mean was not written into the tensor it was given (write in place, with copy_ inside noGrad; new tensors put in the list are not seen by the caller)`);
      ctx.expectClose(t, expected[i]!, { rank, label, rtol: 1e-6, atol: 1e-6 });
    });
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
    // The mean first (a wrong rank is named as such), then the same bits everywhere.
    expectMeans(ctx, outputs, shapes, ctx.seedFor('data'));
    outputs.slice(1).forEach((tensors, k) => tensors.forEach((t, i) => ctx.expectEqual(t, outputs[0]![i]!, { rank: k + 1, label: `tensors[${i}] compared with rank 0's, bit for bit` })));
    ctx.note('4 ranks: every rank holds bit for bit the same values, and they are the mean');
  },
};
