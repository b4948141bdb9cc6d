/**
 * Hidden checks of ex06-gradient-accumulation: every world size of the
 * manifest with 1 to 4 micro-batches of random lengths, edge cases (one
 * micro-batch, micro-batches of one example, many micro-batches), and the
 * trace of every run of two ranks or more: one collective call a step. Every
 * expectation is computed here, at grade time, from lengths and data drawn
 * from the grading seed.
 */
import { deriveSeed } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { expectOneAllReduce, expectTraining, runAccumulation, spec, SIZES, type Run } from '../../checks/ex06-gradient-accumulation/checks.ts';
import type { AccumulationSpec } from '../../checks/ex06-gradient-accumulation/data.ts';

/**
 * The world-size runs, shared by the values check and the trace check: one
 * launch per world size and grading (its seed depends on the grading seed
 * only, as ctx.seedFor differs from check to check).
 */
function worldSizeRun(ctx: CheckContext, worldSize: number): Promise<Run> {
  const k = 1 + (worldSize % 4);
  const s = spec(deriveSeed(ctx.seed, 6, worldSize), worldSize, 3, k, 2 * k + 3);
  return ctx.shared(`ex06 world ${worldSize} ${s.seed}`, () => runAccumulation(ctx, s));
}

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) expectTraining(ctx, await worldSizeRun(ctx, worldSize));
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')} with 1 to 4 micro-batches of random lengths, 3 SGD steps: every gradient and parameter matches one process on the whole batch`);
  },
  'edge-cases': async (ctx) => {
    const one: AccumulationSpec = { seed: ctx.seedFor('one'), sizes: SIZES, lr: 0.5, lengths: [[[7], [7], [7]]] };
    const singles: AccumulationSpec = { seed: ctx.seedFor('singles'), sizes: SIZES, lr: 0.5, lengths: [[[1, 1, 1, 1, 6], [2, 1, 1, 4, 2]]] };
    const many = spec(ctx.seedFor('many'), 2, 2, 8, 13);
    for (const s of [one, singles, many]) expectTraining(ctx, await runAccumulation(ctx, s));
    ctx.note('one micro-batch a step, micro-batches of one example beside longer ones, and 8 micro-batches a step: every gradient matches one process');
  },
  'one-all-reduce-per-step': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes.filter((n) => n > 1)) expectOneAllReduce(ctx, await worldSizeRun(ctx, worldSize));
    ctx.note('every step of every run of 2 to 5 ranks made one collective call: an all-reduce of every gradient element');
  },
};
