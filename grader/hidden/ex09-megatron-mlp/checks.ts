/**
 * Hidden checks of ex09-megatron-mlp. They hold no answers: the weights,
 * inputs and upstream gradients come from the grading seed, and the
 * unsharded MLP is computed here, at grade time.
 *
 * - world-sizes: 1 to 4 ranks with H = 34 hidden units, which 3 and 4
 *   ranks split unevenly, and in a way that tells chunkBounds (12, 11, 11 on
 *   3 ranks; 9, 9, 8, 8 on 4) from blocks of ⌈H/N⌉ (12, 12, 10; 9, 9, 9, 7);
 * - training-parity: a replicated Linear + tanh before the MLP, 3 SGD
 *   steps on 2, 3 and 4 ranks against one process: a layer before the MLP
 *   that gets a partial gradient trains wrong, and the ranks drift apart;
 * - all-reduces-every-size: the trace of every world-sizes run, one
 *   all-reduce of the output in forward and one of the input gradient in
 *   backward (scores only when world-sizes passed).
 *
 * Tolerance float64 rtol 1e-9, atol 1e-10, as the public checks (3 SGD
 * steps add a few roundings of order 1e-16).
 */
import { deriveSeed } from '@dtlab/tensor';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { hiddenShard, type MLPSpec } from '../../checks/ex09-megatron-mlp/data.ts';
import { TOLERANCE, expectAllReduces, expectGradients, expectOutput, runPass } from '../../checks/ex09-megatron-mlp/checks.ts';
import type { TrainingResult } from './programs.ts';
import { singleProcessTraining, type Training } from './training.ts';

const ENTRY = 'src/megatron-mlp.ts';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'mlpTraining' };

/** The hidden checks' MLP: uneven shards for 3 and 4 ranks, O ≠ D so that a transposed layout cannot pass. */
function hiddenSpec(ctx: CheckContext, worldSize: number): MLPSpec {
  return { seed: deriveSeed(ctx.seed, 9, worldSize), batch: 7, inDim: 8, hidden: 34, outDim: 5 };
}

const TRAINING_STEPS = 3;
const TRAINING_TOLERANCE = TOLERANCE;

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const pass = await runPass(ctx, worldSize, hiddenSpec(ctx, worldSize));
      expectOutput(ctx, pass);
      expectGradients(ctx, pass);
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')} with H = 34 hidden units (uneven shards): the output and every gradient match the unsharded MLP`);
  },
  'training-parity': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes.filter((n) => n > 1)) {
      const t: Training = { mlp: { ...hiddenSpec(ctx, worldSize), seed: deriveSeed(ctx.seed, 19, worldSize) }, inputs: 5, steps: TRAINING_STEPS, lr: 0.1 };
      const result = await ctx.run({
        worldSize,
        program: training,
        args: [ctx.entry(ENTRY), t],
        returns: { object: Object.fromEntries(['pre', 'w1', 'b1', 'w2', 'b2'].map((k) => [k, { array: 'tensor', length: t.steps }])) },
      });
      const expected = singleProcessTraining(t);
      result.ranks.forEach(({ rank, value }) => {
        const got = value as TrainingResult;
        const { start, end } = hiddenShard(t.mlp.hidden, worldSize, rank);
        expected.forEach((want, s) => {
          const at = `after SGD step ${s + 1} with ${worldSize} ranks`;
          ctx.expectClose(got.pre[s]!, want.pre, { rank, label: `the parameters of the replicated Linear layer before the MLP ${at}`, ...TRAINING_TOLERANCE });
          ctx.expectClose(got.w1[s]!, want.mlp.w1.slice(0, start, end), { rank, label: `w1 (rows ${start} to ${end - 1}) ${at}`, ...TRAINING_TOLERANCE });
          ctx.expectClose(got.b1[s]!, want.mlp.b1.slice(0, start, end), { rank, label: `b1 (entries ${start} to ${end - 1}) ${at}`, ...TRAINING_TOLERANCE });
          ctx.expectClose(got.w2[s]!, want.mlp.w2.slice(1, start, end), { rank, label: `w2 (columns ${start} to ${end - 1}) ${at}`, ...TRAINING_TOLERANCE });
          ctx.expectClose(got.b2[s]!, want.mlp.b2, { rank, label: `b2 ${at}`, ...TRAINING_TOLERANCE });
        });
      });
    }
    ctx.note(`2 to 4 ranks, ${TRAINING_STEPS} SGD steps of a Linear + tanh layer and the MLP: every rank's parameters match one process`);
  },
  'all-reduces-every-size': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) expectAllReduces(ctx, await runPass(ctx, worldSize, hiddenSpec(ctx, worldSize)));
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: one ring all-reduce of y [7, 5] in forward and one of the input gradient [7, 8] in backward, nothing else`);
  },
};
