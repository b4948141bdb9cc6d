/**
 * Public checks of ex11-gpipe. Each builds a seeded stack of linear layers
 * with tanh, cuts it into one stage per rank, and trains it with the
 * submission's pipeline step and plain SGD (Adam would hide a gradient of
 * the wrong scale); every stage's gradients and updated parameters after
 * each step, and the loss the last stage reports, must equal one process
 * training the whole model on the whole batch, computed here. The bubble
 * check times one step on the virtual device.
 *
 * Tolerance of the parity: float64, rtol 1e-9 and atol 1e-12 (the
 * pipeline adds the micro-batches' gradients in another order than one
 * backward over the whole batch does, which changes the last few bits).
 */
import { DEFAULT_COST, type LaunchResult } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { singleProcessTraining, stageLayers, type PipelineSpec } from './data.ts';
import { trainingShape, type TrainingResult } from './programs.ts';

const ENTRY = 'src/gpipe.ts';
const EXPORT = 'gpipeStep';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'pipelineTraining' };
const timed = { module: programPath(import.meta.url, './programs.ts'), export: 'timedStep' };

export const TOLERANCE = { rtol: 1e-9, atol: 1e-12 };

/** One training launch and what every stage handed back. */
export interface TrainingRun {
  spec: PipelineSpec;
  outputs: TrainingResult[];
  result: LaunchResult;
}

/** Trains `spec` with the submission's `exportName` step, once per grading for each spec (checks share it). */
export function runTraining(ctx: CheckContext, spec: PipelineSpec, entry = ENTRY, exportName = EXPORT): Promise<TrainingRun> {
  return ctx.shared(`pipeline training ${exportName} ${JSON.stringify(spec)}`, async () => {
    const result = await ctx.run({ worldSize: spec.stages, program: training, args: [ctx.entry(entry), spec, exportName], returns: trainingShape(spec.steps) });
    return { spec, outputs: result.ranks.map((r) => r.value as TrainingResult), result };
  });
}

const setup = (spec: PipelineSpec) => `p = ${spec.stages} stage${spec.stages === 1 ? '' : 's'}, m = ${spec.microBatches} micro-batch${spec.microBatches === 1 ? '' : 'es'} of B = ${spec.batch} examples`;

/** Every stage's gradients and parameters after every step, and the last stage's loss, against one process. */
export function expectTrainingParity(ctx: CheckContext, run: TrainingRun): void {
  const { spec } = run;
  const ref = singleProcessTraining(spec);
  run.outputs.forEach((out, rank) => {
    const { start, end } = stageLayers(spec, rank);
    const layers = `layers ${start} to ${end - 1}`;
    if (out.missing.length) {
      ctx.fail(`stage ${rank} (${layers}) with ${setup(spec)}: after the step, ${out.missing[0]} had no gradient: every micro-batch's backward must reach every parameter of every stage`, { rank, index: null, expected: 'a gradient', actual: 'null', label: 'gradients' });
    }
    ref.forEach((want, s) => {
      const at = `after step ${s + 1} with ${setup(spec)}`;
      ctx.expectClose(out.grads[s]!, want.grads[rank]!, { rank, label: `the gradients of stage ${rank} (${layers}, flat) ${at}`, ...TOLERANCE });
      ctx.expectClose(out.params[s]!, want.params[rank]!, { rank, label: `the parameters of stage ${rank} (${layers}, flat) after its SGD step ${s + 1} with ${setup(spec)}`, ...TOLERANCE });
    });
  });
  const lastRank = spec.stages - 1;
  ctx.expectClose(run.outputs[lastRank]!.losses, ref.map((r) => r.loss), { rank: lastRank, label: `the whole batch's mean loss the last stage reports, per step, with ${setup(spec)}`, ...TOLERANCE });
}

/** The bubble fraction (p-1)/(m+p-1) of a pipeline with equal stages. */
export function bubbleFormula(p: number, m: number): number {
  return (p - 1) / (m + p - 1);
}

/**
 * The timed model: 2 layers of 256 per stage, micro-batches of 8 rows,
 * float32, inputs that require grad so that every stage's backward does the
 * same work.
 */
export function bubbleSpec(ctx: CheckContext, stages: number, microBatches: number): PipelineSpec {
  return { seed: ctx.seedFor('bubble', stages, microBatches), widths: Array.from({ length: 2 * stages + 1 }, () => 256), batch: 8 * microBatches, microBatches, stages, steps: 1, lr: 0.1, dtype: 'float32', inputsRequireGrad: true };
}

/**
 * The timed device: 1 GFLOP/s, so that a micro-batch of 8 × 256 computes
 * for about 6.3 ms per stage (forward and backward) against 16.6 µs for its
 * activations on the default network (α = 10 µs, 8 KiB at 1250 bytes per
 * µs): a stage's compute dwarfs its messages, as in real pipelines, while
 * the tensors stay small enough to compute quickly. Its memory bandwidth,
 * 64 GB/s, keeps the elementwise ops (tanh, the loss) cheap next to the
 * matmuls, as on a GPU, so that the stages take the same time to within
 * about 0.5%.
 */
export const PIPELINE_DEVICE = { name: 'pipeline-1-gflops', flops: 1e9, memoryBytes: 64 * 2 ** 20, memoryBandwidth: 64e9 };

/** What the virtual clock measured for one step. */
export interface BubbleMeasure {
  /** The step's time: the last stage to finish, from the common start. */
  stepUs: number;
  /** Mean over stages of 1 - compute/step. */
  bubble: number;
  formula: number;
  /** The band the measurement must fall in. */
  low: number;
  high: number;
}

/**
 * Times one step on the virtual device (PIPELINE_DEVICE) and compares the
 * bubble, the mean over stages of the step's time a stage does not compute,
 * 1 - compute_s / T, with (p-1)/(m+p-1). The formula assumes equal stages
 * and free messages; the band allows for what the cost model adds: the
 * 2(p-1) messages on the critical path (filling and draining the pipeline),
 * each α + bytes/β for a micro-batch's activations, and 0.02 for the
 * stages' unequal compute (the last stage's loss, under 1% of a stage).
 */
export async function measureBubble(ctx: CheckContext, spec: PipelineSpec, entry = ENTRY, exportName = EXPORT): Promise<BubbleMeasure> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: timed, args: [ctx.entry(entry), spec, exportName, key], device: PIPELINE_DEVICE, returns: 'number' });
  const label = `pipeline step ${key}`;
  const regions = result.device!.ranks.map((d) => d.regions.find((r) => r.label === label));
  const missing = regions.findIndex((r) => r === undefined);
  if (missing !== -1) throw new Error(`BUG: stage ${missing} has no region '${label}'`);
  const stepUs = Math.max(...regions.map((r) => r!.totalUs));
  const bubble = regions.reduce((s, r) => s + (1 - r!.computeUs / stepUs), 0) / spec.stages;
  const rows = Math.ceil(spec.batch / spec.microBatches);
  const messageUs = DEFAULT_COST.alphaUs + (rows * spec.widths[1]! * 4) / DEFAULT_COST.bytesPerUs;
  const formula = bubbleFormula(spec.stages, spec.microBatches);
  return { stepUs, bubble, formula, low: formula - 0.02, high: formula + (2 * (spec.stages - 1) * messageUs) / stepUs + 0.02 };
}

/** Fails unless the measured bubble falls in its band. */
export function expectBubble(ctx: CheckContext, spec: PipelineSpec, b: BubbleMeasure): string {
  const text = `p = ${spec.stages}, m = ${spec.microBatches}: bubble ${b.bubble.toFixed(3)} of a ${(b.stepUs / 1000).toFixed(2)} ms step, (p-1)/(m+p-1) = ${b.formula.toFixed(3)}`;
  if (b.bubble < b.low || b.bubble > b.high) {
    ctx.fail(
      `${text}: outside ${b.low.toFixed(3)} to ${b.high.toFixed(3)} (the formula, messages on the critical path and unequal stages). ${b.bubble > b.high ? 'The stages wait longer than the schedule needs: does every stage start the next micro-batch\'s forward as soon as it has sent the last one on, and its backwards as soon as the gradients arrive, rather than waiting for a micro-batch to go all the way through?' : 'Less idle time than the schedule allows: are all the micro-batches computed?'}`,
      { rank: null, index: null, expected: `${b.low.toFixed(3)} to ${b.high.toFixed(3)}`, actual: b.bubble.toFixed(3), label: 'bubble fraction of the step' },
    );
  }
  return text;
}

/** The public checks' model: 8 layers of width 8 on 6 inputs and 5 classes, float64. */
export function parityWidths(): number[] {
  return [6, 8, 8, 8, 8, 8, 8, 8, 5];
}

export const checks: Record<string, CheckFn> = {
  'parity-two-stages': async (ctx) => {
    const spec: PipelineSpec = { seed: ctx.seedFor('two'), widths: parityWidths(), batch: 8, microBatches: 4, stages: 2, steps: 2, lr: 0.1, dtype: 'float64' };
    expectTrainingParity(ctx, await runTraining(ctx, spec));
  },
  'parity-four-stages': async (ctx) => {
    const spec: PipelineSpec = { seed: ctx.seedFor('four'), widths: parityWidths(), batch: 12, microBatches: 4, stages: 4, steps: 2, lr: 0.1, dtype: 'float64' };
    expectTrainingParity(ctx, await runTraining(ctx, spec));
    ctx.note('4 stages of 2 layers, 4 micro-batches of 3: two SGD steps match one process on the whole batch');
  },
  'bubble-four-stages': async (ctx) => {
    const spec = bubbleSpec(ctx, 4, 8);
    ctx.note(expectBubble(ctx, spec, await measureBubble(ctx, spec)));
  },
};
