/**
 * Hidden checks of ex12-1f1b. They hold no answers: the model and the
 * batches come from the grading seed, and one process's SGD training on the
 * whole batch is computed here, at grade time.
 *
 * - parity-every-shape: 1 to 4 stages, m from 1 to 8 (below, at and above
 *   p - 1), batches m does not divide, three SGD steps;
 * - no-deadlock: 3 and 4 stages with 1, 2 and 5 micro-batches, one step
 *   each, to completion and in parity (a schedule that waits for a
 *   gradient before sending an activation its neighbour needs never
 *   finishes, and the runtime reports the deadlock);
 * - activation-memory: in every run of parity-every-shape, no stage holds
 *   more than min(p - s, m) micro-batches at once; and the device memory of
 *   a step of 4 stages and 12 micro-batches stays within what 1F1B keeps
 *   (a schedule that counts right but keeps every micro-batch's
 *   activations to the end shows there); scores only with parity;
 * - bubble: 4 stages, 8 micro-batches on the virtual clock, against
 *   (p-1)/(m+p-1), the same as GPipe's (scores only with parity).
 */
import { deriveSeed } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { bubbleSpec, expectActivationMemory, expectBubble, expectInFlight, expectTrainingParity, memorySpec, parityWidths, runTraining } from '../../checks/ex12-1f1b/checks.ts';
import type { PipelineSpec } from '../../checks/ex12-1f1b/data.ts';

/** (p, m, B): every world size, m = 1, m below, at and above p - 1, B that m does not divide. */
const SHAPES: [number, number, number][] = [
  [1, 3, 10],
  [2, 1, 6],
  [2, 5, 11],
  [3, 1, 4],
  [3, 2, 9],
  [3, 4, 10],
  [4, 2, 9],
  [4, 3, 7],
  [4, 8, 20],
];

/** (p, m) of the deadlock runs. */
const DEADLOCK: [number, number][] = [
  [3, 1],
  [3, 2],
  [3, 5],
  [4, 1],
  [4, 2],
  [4, 5],
];

function spec(ctx: CheckContext, key: number, stages: number, microBatches: number, batch: number, steps: number): PipelineSpec {
  return { seed: deriveSeed(ctx.seed, key, stages, microBatches), widths: parityWidths(), batch, microBatches, stages, steps, lr: 0.1, dtype: 'float64' };
}

export const checks: Record<string, CheckFn> = {
  'parity-every-shape': async (ctx) => {
    for (const [p, m, b] of SHAPES) expectTrainingParity(ctx, await runTraining(ctx, spec(ctx, 12, p, m, b, 3)));
    ctx.note(`(p, m, B) = ${SHAPES.map((s) => `(${s.join(', ')})`).join(', ')}: three SGD steps of every stage match one process on the whole batch`);
  },
  'no-deadlock': async (ctx) => {
    for (const [p, m] of DEADLOCK) expectTrainingParity(ctx, await runTraining(ctx, spec(ctx, 13, p, m, 2 * m + 1, 1)));
    ctx.note(`(p, m) = ${DEADLOCK.map((s) => `(${s.join(', ')})`).join(', ')}: every run finished, in parity`);
  },
  'activation-memory': async (ctx) => {
    for (const [p, m, b] of SHAPES) expectInFlight(ctx, await runTraining(ctx, spec(ctx, 12, p, m, b, 3)));
    ctx.note('every shape of parity-every-shape: at most min(p - s, m) micro-batches in flight on stage s');
    ctx.note(await expectActivationMemory(ctx, memorySpec(ctx, 4, 12)));
  },
  bubble: async (ctx) => {
    ctx.note(await expectBubble(ctx, bubbleSpec(ctx, 4, 8)));
  },
};
