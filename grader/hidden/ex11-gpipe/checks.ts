/**
 * Hidden checks of ex11-gpipe. They hold no answers: the model and the
 * batches come from the grading seed, and one process's SGD training on the
 * whole batch is computed here, at grade time.
 *
 * - parity-every-shape: 1 to 4 stages, one micro-batch and more micro-batches
 *   than stages, batches that m does not divide (chunkBounds(B, m) gives
 *   micro-batches of different sizes, so each loss must be weighed by its
 *   share of the batch, n_j / B, not by 1/m), three SGD steps;
 * - bubble-every-m: the bubble of 4 stages with 2, 4 and 16 micro-batches
 *   on the virtual clock against (p-1)/(m+p-1) (scores only when the values
 *   are right);
 * - neighbours-only: in every run of parity-every-shape, stage s sends m
 *   messages to stage s+1, each a micro-batch's activations, and m to stage
 *   s-1, each the gradient of a micro-batch's input, and nothing else.
 */
import { chunkBounds, deriveSeed } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { bubbleSpec, expectBubble, expectTrainingParity, measureBubble, parityWidths, runTraining, type TrainingRun } from '../../checks/ex11-gpipe/checks.ts';
import type { PipelineSpec } from '../../checks/ex11-gpipe/data.ts';

/** (p, m, B): every world size, m = 1, m below, at and above p, B that m does not divide. */
const SHAPES: [number, number, number][] = [
  [1, 3, 10],
  [2, 1, 6],
  [2, 5, 11],
  [3, 4, 10],
  [4, 3, 7],
  [4, 8, 20],
];

function specs(ctx: CheckContext): PipelineSpec[] {
  return SHAPES.map(([stages, microBatches, batch]) => ({ seed: deriveSeed(ctx.seed, 11, stages, microBatches), widths: parityWidths(), batch, microBatches, stages, steps: 3, lr: 0.1, dtype: 'float64' }));
}

/** Stage s's messages: m to s+1 of n_j·width(out) elements, m to s-1 of n_j·width(in), none elsewhere. */
function expectNeighbours(ctx: CheckContext, run: TrainingRun): void {
  const { spec } = run;
  const sizes = chunkBounds(spec.batch, spec.microBatches).map((b) => b.end - b.start);
  const perStep = (t: number[]) => [...t].sort((a, b) => a - b).join(',');
  for (let s = 0; s < spec.stages; s++) {
    const sent = run.result.trace.filter((e) => e.src === s);
    const layers = chunkBounds(spec.widths.length - 1, spec.stages)[s]!;
    for (const [dst, width, what] of [[s + 1, spec.widths[layers.end]!, 'activations'], [s - 1, spec.widths[layers.start]!, 'input gradients']] as const) {
      if (dst < 0 || dst >= spec.stages) continue;
      const counts = sent.filter((e) => e.dst === dst).map((e) => e.count);
      const want = Array.from({ length: spec.steps }, () => sizes.map((n) => n * width)).flat();
      if (perStep(counts) !== perStep(want)) {
        ctx.fail(
          `stage ${s} with p = ${spec.stages}, m = ${spec.microBatches}, B = ${spec.batch} sent ${counts.length} messages to stage ${dst} in ${spec.steps} steps (elements: ${counts.slice(0, 12).join(', ')}${counts.length > 12 ? ', ...' : ''}); a pipeline sends one per micro-batch and step, each the ${what} of its ${sizes.join(', ')} rows × ${width}`,
          { rank: s, index: null, expected: `${want.length} messages`, actual: `${counts.length} messages`, label: `messages from stage ${s} to stage ${dst}` },
        );
      }
    }
    const stray = sent.find((e) => Math.abs(e.dst - s) !== 1);
    if (stray) ctx.fail(`stage ${s} with p = ${spec.stages} sent a message to stage ${stray.dst}: a pipeline stage talks only to its neighbours`, { rank: s, index: null, expected: `to stage ${s - 1} or ${s + 1}`, actual: `to stage ${stray.dst}`, label: 'destination of a message' });
  }
}

export const checks: Record<string, CheckFn> = {
  'parity-every-shape': async (ctx) => {
    for (const spec of specs(ctx)) expectTrainingParity(ctx, await runTraining(ctx, spec));
    ctx.note(`(p, m, B) = ${SHAPES.map((s) => `(${s.join(', ')})`).join(', ')}: three SGD steps of every stage match one process on the whole batch`);
  },
  'bubble-every-m': async (ctx) => {
    for (const m of [2, 4, 16]) {
      const spec = bubbleSpec(ctx, 4, m);
      ctx.note(expectBubble(ctx, spec, await measureBubble(ctx, spec)));
    }
  },
  'neighbours-only': async (ctx) => {
    for (const spec of specs(ctx)) expectNeighbours(ctx, await runTraining(ctx, spec));
    ctx.note('every stage sent one message a micro-batch to each neighbour: activations forward, gradients backward');
  },
};
