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
import { DEFAULT_COST, type LaunchResult, type RankStats } from '@dtlab/runtime';
import { expectMainStreamOnly, programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { singleProcessTraining, stageLayers, type PipelineSpec } from './data.ts';
import { referenceLabel, stepLabel, trainingShape, type TrainingResult } from './programs.ts';

const ENTRY = 'src/gpipe.ts';
const EXPORT = 'gpipeStep';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'pipelineTraining' };
const timed = { module: programPath(import.meta.url, './programs.ts'), export: 'timedStep' };

export const TOLERANCE = { rtol: 1e-9, atol: 1e-12 };

/**
 * Tolerance of the timed run's parity (float32): each gradient entry is a
 * sum over at most 128 rows of products whose rounding (2^-24 each) the
 * pipeline and one process do in another order; rtol 1e-4 is over 500
 * times that, and a wrong weight of a micro-batch (1/m, or none) moves
 * entries by tens of percent.
 */
export const TIMED_TOLERANCE = { rtol: 1e-4, atol: 1e-7 };

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
export function expectTrainingParity(ctx: CheckContext, run: TrainingRun, tolerance = TOLERANCE): void {
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
      ctx.expectClose(out.grads[s]!, want.grads[rank]!, { rank, label: `the gradients of stage ${rank} (${layers}, flat) ${at}`, ...tolerance });
      ctx.expectClose(out.params[s]!, want.params[rank]!, { rank, label: `the parameters of stage ${rank} (${layers}, flat) after its SGD step ${s + 1} with ${setup(spec)}`, ...tolerance });
    });
  });
  const lastRank = spec.stages - 1;
  ctx.expectClose(run.outputs[lastRank]!.losses, ref.map((r) => r.loss), { rank: lastRank, label: `the whole batch's mean loss the last stage reports, per step, with ${setup(spec)}`, ...tolerance });
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
  /** The longest the step may take: GPipe's schedule of the measured micro-batch times, with margin. */
  stepLimitUs: number;
  /**
   * Per stage: the compute and FLOPs the step needs, c_first + (m-1)·c_next
   * from the reference micro-batches; the compute of a later micro-batch,
   * c_next; the step's main-stream compute and FLOPs; other streams' compute.
   */
  stages: { neededUs: number; neededFlops: number; microBatchUs: number; computeUs: number; flops: number; backgroundUs: number }[];
  /** Per stage, the launch's traffic and its background streams (RankStats.backgroundStreams, backgroundWaitUs). */
  stats: RankStats[];
}

/**
 * Margin on the work of the step against the reference micro-batches'
 * (the first, then m-1 that add into the gradients): the step adds what the
 * reference leaves out, the slices of the batch and the sum of the inputs'
 * gradient on stage 0 (bytes-bound ops on [B, 256], under 0.2% of a
 * stage's matmuls here); 3% is over ten times that, while recomputing the
 * forwards adds 33% and padding a schedule's bubble adds (p-1)/m or more.
 */
export const WORK_MARGIN = 0.03;

/**
 * Times one step on the virtual device (PIPELINE_DEVICE) and compares the
 * bubble, the mean over stages of the step's time a stage does not compute,
 * 1 - compute_s / T, with (p-1)/(m+p-1). The formula assumes equal stages
 * and free messages; the band allows for what the cost model adds: the
 * 2(p-1) messages on the critical path (filling and draining the pipeline),
 * each α + bytes/β for a micro-batch's activations, and 0.02 for the
 * stages' unequal compute (the last stage's loss, under 1% of a stage).
 *
 * A fraction alone can be padded (idle time filled with thrown-away work),
 * so the same run also measures, in the rank program, the compute and
 * FLOPs of a micro-batch's forward and backward through stage s (the first,
 * and a later one that adds into the gradients, c_s), and bounds the step by
 * them: every stage's main-stream FLOPs at least (1 - WORK_MARGIN) times
 * what its m micro-batches need (no work done outside the tensor library),
 * its compute at most (1 + WORK_MARGIN) times that (no padding), nothing
 * computed on other streams beyond WORK_MARGIN of it, no background stream at
 * all (a stage's time is its main stream's, and what a background stream
 * computes or waits for runs beside it; expectMainStreamOnly), and the step's time T
 * at most GPipe's critical path, (1 + WORK_MARGIN)·(Σ_s c_s +
 * (m-1)·max_s c_s) plus the 2(p-1) messages: the first micro-batch's
 * forward and the last one's backward cross every stage, and the slowest
 * stage runs the other m-1 micro-batches back to back.
 */
export async function measureBubble(ctx: CheckContext, spec: PipelineSpec, entry = ENTRY, exportName = EXPORT): Promise<BubbleMeasure> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: timed, args: [ctx.entry(entry), spec, exportName, key], device: PIPELINE_DEVICE, returns: trainingShape(1) });
  // The timed step must be a right step: a submission that acts otherwise when timed is caught here.
  expectTrainingParity(ctx, { spec, outputs: result.ranks.map((r) => r.value as TrainingResult), result }, TIMED_TOLERANCE);
  const find = (label: string) => result.device!.ranks.map((d, s) => {
    const r = d.regions.find((x) => x.label === label);
    if (!r) throw new Error(`BUG: stage ${s} has no region '${label}'`);
    return r;
  });
  const regions = find(stepLabel(key));
  const first = find(referenceLabel(key, 0));
  const next = find(referenceLabel(key, 1));
  const stepUs = Math.max(...regions.map((r) => r.totalUs));
  const bubble = regions.reduce((s, r) => s + (1 - r.computeUs / stepUs), 0) / spec.stages;
  const rows = Math.ceil(spec.batch / spec.microBatches);
  const messageUs = DEFAULT_COST.alphaUs + (rows * spec.widths[1]! * 4) / DEFAULT_COST.bytesPerUs;
  const formula = bubbleFormula(spec.stages, spec.microBatches);
  const m = spec.microBatches;
  const c = next.map((r) => r.computeUs);
  const stepLimitUs = (1 + WORK_MARGIN) * (c.reduce((a, b) => a + b, 0) + (m - 1) * Math.max(...c)) + 2 * (spec.stages - 1) * messageUs;
  const stages = regions.map((r, s) => ({
    neededUs: first[s]!.computeUs + (m - 1) * next[s]!.computeUs,
    neededFlops: first[s]!.flops + (m - 1) * next[s]!.flops,
    microBatchUs: next[s]!.computeUs,
    computeUs: r.computeUs,
    flops: r.flops,
    backgroundUs: result.device!.ranks[s]!.streams.filter((x) => x.id !== 0).reduce((a, x) => a + x.computeUs, 0),
  }));
  return { stats: result.stats, stepUs, bubble, formula, low: formula - 0.02, high: formula + (2 * (spec.stages - 1) * messageUs) / stepUs + 0.02, stepLimitUs, stages };
}

/** Fails unless the measured bubble falls in its band, the step's time within GPipe's and every stage's work m micro-batches'. */
export function expectBubble(ctx: CheckContext, spec: PipelineSpec, b: BubbleMeasure): string {
  const m = spec.microBatches;
  const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;
  const work = b.stages.map((st) => `${ms(st.computeUs)} of ${ms(st.neededUs)}`).join(', ');
  const text = `p = ${spec.stages}, m = ${m}: bubble ${b.bubble.toFixed(3)} of a ${ms(b.stepUs)} step, (p-1)/(m+p-1) = ${b.formula.toFixed(3)}`;
  const mflop = (f: number) => `${(f / 1e6).toFixed(2)} MFLOP`;
  // First: a step that hid its waits measures a bubble that says nothing of its schedule.
  b.stats.forEach((st) => expectMainStreamOnly(ctx, `stage ${st.rank} with p = ${spec.stages}, m = ${m}`, st));
  if (b.bubble < b.low || b.bubble > b.high) {
    ctx.fail(
      `${text}: outside ${b.low.toFixed(3)} to ${b.high.toFixed(3)} (the formula, messages on the critical path and unequal stages). ${b.bubble > b.high ? 'The stages wait longer than the schedule needs: does every stage start the next micro-batch\'s forward as soon as it has sent the last one on, and its backwards as soon as the gradients arrive, rather than waiting for a micro-batch to go all the way through?' : 'Less idle time than the schedule allows: are all the micro-batches computed?'}`,
      { rank: null, index: null, expected: `${b.low.toFixed(3)} to ${b.high.toFixed(3)}`, actual: b.bubble.toFixed(3), label: 'bubble fraction of the step' },
    );
  }
  b.stages.forEach((st, s) => {
    const at = `stage ${s} with p = ${spec.stages}, m = ${m}`;
    const needs = `m = ${m} micro-batches' forward and backward (${mflop(st.neededFlops)}, ${ms(st.neededUs)}, measured in the same run)`;
    if (st.flops < (1 - WORK_MARGIN) * st.neededFlops) {
      ctx.fail(`${at} computed ${mflop(st.flops)} with the tensor library in the timed step, less than ${needs} less ${WORK_MARGIN * 100}%: do all the work with tensor ops, every micro-batch's forward and backward`, { rank: s, index: null, expected: `>= ${mflop((1 - WORK_MARGIN) * st.neededFlops)}`, actual: mflop(st.flops), label: `FLOPs of the timed step on stage ${s}` });
    }
    if (st.computeUs > (1 + WORK_MARGIN) * st.neededUs) {
      ctx.fail(`${at} computed for ${ms(st.computeUs)} in the timed step, more than ${needs} plus ${WORK_MARGIN * 100}%: a pipeline step computes each micro-batch's forward and backward once, and nothing else`, { rank: s, index: null, expected: `<= ${ms((1 + WORK_MARGIN) * st.neededUs)}`, actual: ms(st.computeUs), label: `compute of the timed step on stage ${s}` });
    }
    if (st.backgroundUs > WORK_MARGIN * st.neededUs) {
      ctx.fail(`${at} computed for ${ms(st.backgroundUs)} on background streams; a pipeline stage computes on its main stream`, { rank: s, index: null, expected: `<= ${ms(WORK_MARGIN * st.neededUs)}`, actual: ms(st.backgroundUs), label: `background compute on stage ${s}` });
    }
  });
  if (b.stepUs > b.stepLimitUs) {
    ctx.fail(
      `${text}: the step took longer than GPipe's schedule of the micro-batch times measured in the same run, (1 + ${WORK_MARGIN})·(Σ_s c_s + (m-1)·max_s c_s) plus the fill and drain messages = ${ms(b.stepLimitUs)}: does every stage start the next micro-batch's forward as soon as it has sent the last one on, and its backwards as soon as the gradients arrive, rather than waiting for a micro-batch to go all the way through?`,
      { rank: null, index: null, expected: `<= ${ms(b.stepLimitUs)}`, actual: ms(b.stepUs), label: 'time of the step' },
    );
  }
  return `${text}; at most ${ms(b.stepLimitUs)}; compute per stage ${work} needed`;
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
