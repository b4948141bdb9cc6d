/**
 * Public checks of ex12-1f1b. Each builds a seeded stack of linear layers
 * with tanh, cuts it into one stage per rank, and trains it with the
 * submission's 1F1B step and plain SGD; every stage's gradients and updated
 * parameters after each step, and the loss the last stage reports, must
 * equal one process training the whole model on the whole batch, computed
 * here. The in-flight check counts, inside each stage, the micro-batches
 * whose forward has run and whose backward has not.
 *
 * Tolerance of the parity: float64, rtol 1e-9 and atol 1e-12 (the
 * micro-batches' gradients are added in another order than one backward
 * over the whole batch adds them).
 */
import { DEFAULT_COST, type LaunchResult } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { singleProcessTraining, stageLayers, type PipelineSpec } from './data.ts';
import { trainingShape, type TrainingResult } from './programs.ts';

const ENTRY = 'src/1f1b.ts';
const EXPORT = 'oneFOneBStep';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'pipelineTraining' };
const timed = { module: programPath(import.meta.url, './programs.ts'), export: 'timedStep' };
const memoryProgram = { module: programPath(import.meta.url, './programs.ts'), export: 'memoryStep' };

export const TOLERANCE = { rtol: 1e-9, atol: 1e-12 };

/** One training launch and what every stage handed back. */
export interface TrainingRun {
  spec: PipelineSpec;
  outputs: TrainingResult[];
  result: LaunchResult;
}

/** Trains `spec` with the submission's step, once per grading for each spec (checks share it). */
export function runTraining(ctx: CheckContext, spec: PipelineSpec): Promise<TrainingRun> {
  return ctx.shared(`1f1b training ${JSON.stringify(spec)}`, async () => {
    const result = await ctx.run({ worldSize: spec.stages, program: training, args: [ctx.entry(ENTRY), spec, EXPORT], returns: trainingShape(spec.steps) });
    return { spec, outputs: result.ranks.map((r) => r.value as TrainingResult), result };
  });
}

export const setup = (spec: PipelineSpec) => `p = ${spec.stages} stage${spec.stages === 1 ? '' : 's'}, m = ${spec.microBatches} micro-batch${spec.microBatches === 1 ? '' : 'es'} of B = ${spec.batch} examples`;

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
      ctx.expectClose(out.grads[s]!, want.grads[rank]!, { rank, label: `the gradients of stage ${rank} (${layers}, flat) after step ${s + 1} with ${setup(spec)}`, ...TOLERANCE });
      ctx.expectClose(out.params[s]!, want.params[rank]!, { rank, label: `the parameters of stage ${rank} (${layers}, flat) after its SGD step ${s + 1} with ${setup(spec)}`, ...TOLERANCE });
    });
  });
  const lastRank = spec.stages - 1;
  ctx.expectClose(run.outputs[lastRank]!.losses, ref.map((r) => r.loss), { rank: lastRank, label: `the whole batch's mean loss the last stage reports, per step, with ${setup(spec)}`, ...TOLERANCE });
}

/** The most micro-batches stage s may hold under 1F1B: its warm-up forwards, min(p - s - 1, m), and the one of the steady state. */
export function inFlightLimit(p: number, m: number, s: number): number {
  return Math.min(p - s, m);
}

/** Every stage held at most min(p - s, m) micro-batches at once, in every step. */
export function expectInFlight(ctx: CheckContext, run: TrainingRun): string {
  const { spec } = run;
  const seen: number[] = [];
  run.outputs.forEach((out, s) => {
    const most = Math.max(...out.inFlight.toArray());
    seen.push(most);
    const limit = inFlightLimit(spec.stages, spec.microBatches, s);
    if (most > limit) {
      ctx.fail(
        `stage ${s} with ${setup(spec)} held the activations of ${most} micro-batches at once (forwards run, backwards not yet); 1F1B keeps at most min(p - s, m) = ${limit} on stage ${s}: its warm-up forwards, min(p - s - 1, m) = ${Math.min(spec.stages - s - 1, spec.microBatches)}, and one in the steady state (all-forward-all-backward keeps all ${spec.microBatches})`,
        { rank: s, index: null, expected: `<= ${limit}`, actual: most, label: `micro-batches in flight on stage ${s}` },
      );
    }
  });
  return `${setup(spec)}: at most ${seen.join(', ')} micro-batches in flight on stages 0 to ${spec.stages - 1} (1F1B allows ${seen.map((_, s) => inFlightLimit(spec.stages, spec.microBatches, s)).join(', ')}; GPipe would keep ${spec.microBatches} everywhere)`;
}

/** The bubble fraction (p-1)/(m+p-1) of a pipeline with equal stages. */
export function bubbleFormula(p: number, m: number): number {
  return (p - 1) / (m + p - 1);
}

/** The timed model, as exercise 11's: 2 layers of 256 per stage, micro-batches of 8 rows, float32, inputs that require grad. */
export function bubbleSpec(ctx: CheckContext, stages: number, microBatches: number): PipelineSpec {
  return { seed: ctx.seedFor('bubble', stages, microBatches), widths: Array.from({ length: 2 * stages + 1 }, () => 256), batch: 8 * microBatches, microBatches, stages, steps: 1, lr: 0.1, dtype: 'float32', inputsRequireGrad: true };
}

/** The timed device, as exercise 11's: 1 GFLOP/s and 64 GB/s, so that a stage's matmuls dwarf its messages and its elementwise ops. */
export const PIPELINE_DEVICE = { name: 'pipeline-1-gflops', flops: 1e9, memoryBytes: 64 * 2 ** 20, memoryBandwidth: 64e9 };

/**
 * Times one step and compares the bubble (the mean over stages of
 * 1 - compute_s / T, T the step's time) with (p-1)/(m+p-1), as exercise
 * 11 does: within 0.02 below, and 0.02 plus the 2(p-1) messages of the fill
 * and the drain (α + bytes/β each) above. 1F1B reorders the work, it does
 * not remove any: its bubble is GPipe's.
 */
export async function expectBubble(ctx: CheckContext, spec: PipelineSpec): Promise<string> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: timed, args: [ctx.entry(ENTRY), spec, EXPORT, key], device: PIPELINE_DEVICE, returns: 'number' });
  const label = `pipeline step ${key}`;
  const regions = result.device!.ranks.map((d) => d.regions.find((r) => r.label === label));
  const missing = regions.findIndex((r) => r === undefined);
  if (missing !== -1) throw new Error(`BUG: stage ${missing} has no region '${label}'`);
  const stepUs = Math.max(...regions.map((r) => r!.totalUs));
  const bubble = regions.reduce((s, r) => s + (1 - r!.computeUs / stepUs), 0) / spec.stages;
  const messageUs = DEFAULT_COST.alphaUs + (Math.ceil(spec.batch / spec.microBatches) * spec.widths[1]! * 4) / DEFAULT_COST.bytesPerUs;
  const formula = bubbleFormula(spec.stages, spec.microBatches);
  const [low, high] = [formula - 0.02, formula + (2 * (spec.stages - 1) * messageUs) / stepUs + 0.02];
  const text = `p = ${spec.stages}, m = ${spec.microBatches}: bubble ${bubble.toFixed(3)} of a ${(stepUs / 1000).toFixed(2)} ms step, (p-1)/(m+p-1) = ${formula.toFixed(3)}`;
  if (bubble < low || bubble > high) {
    ctx.fail(`${text}: outside ${low.toFixed(3)} to ${high.toFixed(3)} (the formula, messages on the critical path and unequal stages). ${bubble > high ? 'The stages wait longer than the schedule needs: does each stage do its warm-up forwards back to back, and in the steady state start each forward or backward as soon as its input has arrived?' : 'Less idle time than the schedule allows: are all the micro-batches computed?'}`, { rank: null, index: null, expected: `${low.toFixed(3)} to ${high.toFixed(3)}`, actual: bubble.toFixed(3), label: 'bubble fraction of the step' });
  }
  return text;
}

/** The memory model: 2 layers of 64 per stage, micro-batches of 64 rows, so that a micro-batch's activations outweigh the stage's gradients. */
export function memorySpec(ctx: CheckContext, stages: number, microBatches: number): PipelineSpec {
  return { seed: ctx.seedFor('memory', stages, microBatches), widths: Array.from({ length: 2 * stages + 1 }, () => 64), batch: 64 * microBatches, microBatches, stages, steps: 1, lr: 0.1, dtype: 'float32' };
}

/**
 * Device memory of one step, between trusted marks (see memoryStep): the
 * step's peak over what was in use before it must stay within
 * (min(p - s, m) + 2)·A + 2·G + 64 KiB on stage s, where A is what one
 * micro-batch keeps alive there (measured in the same run with the check's
 * own forward, the loss's graph included on the last stage) and G the
 * stage's gradients: the micro-batches 1F1B keeps, one more micro-batch of
 * backward temporaries and messages, and what the meter may count between
 * two points (the gradients of one backward and the activations of one
 * forward, or 64 KiB). All-forward-all-backward keeps m·A: with m = 12 and
 * p = 4 that is 3 to 12 times what 1F1B keeps. The bound is coarse by
 * design (a warm-up one too long can hide inside it); the in-flight checks
 * count the micro-batches exactly.
 */
export async function expectActivationMemory(ctx: CheckContext, spec: PipelineSpec): Promise<string> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: memoryProgram, args: [ctx.entry(ENTRY), spec, EXPORT, key], device: 'course', markKey: key, returns: 'number' });
  const lines: string[] = [];
  const over: { s: number; peak: number; limit: number; perMicroBatch: number; grads: number }[] = [];
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  result.device!.ranks.forEach((d, s) => {
    const marks = d.memory.marks.filter((k) => k.trusted);
    const before = marks.find((k) => k.label === 'before the step');
    const after = marks.find((k) => k.label === 'after the step');
    if (!before || !after) throw new Error(`BUG: stage ${s} is missing its trusted marks`);
    const perMicroBatch = result.ranks[s]!.value as number;
    const { start, end } = stageLayers(spec, s);
    let grads = 0;
    for (let i = start; i < end; i++) grads += (spec.widths[i]! * spec.widths[i + 1]! + spec.widths[i + 1]!) * 4;
    const k = inFlightLimit(spec.stages, spec.microBatches, s);
    const limit = (k + 2) * perMicroBatch + 2 * grads + 64 * 1024;
    const peak = after.peakBytes - before.inUseBytes;
    lines.push(`stage ${s}: ${kib(peak)} (limit ${kib(limit)}, A = ${kib(perMicroBatch)})`);
    if (peak > limit) over.push({ s, peak, limit, perMicroBatch, grads });
  });
  if (over.length) {
    ctx.note(lines.join(' · '));
    const { s, peak, limit, perMicroBatch, grads } = over[0]!;
    ctx.fail(
      `stage ${s} with ${setup(spec)}: the step's memory peak was ${kib(peak)} above what was in use before it, more than 1F1B needs: (min(p - s, m) + 2)·A + 2·G + 64 KiB = ${kib(limit)}, with A = ${kib(perMicroBatch)} kept alive per micro-batch and G = ${kib(grads)} of gradients (all-forward-all-backward keeps ${spec.microBatches}·A = ${kib(spec.microBatches * perMicroBatch)}). Start each micro-batch's backward as early as the schedule allows, and keep nothing of a micro-batch once its backward is done`,
      { rank: s, index: null, expected: `<= ${limit}`, actual: peak, label: `memory peak of the step on stage ${s}` },
    );
  }
  return `${setup(spec)}: peak memory of the step above the start · ${lines.join(' · ')}`;
}

/** The public checks' model: 8 layers of width 8 on 6 inputs and 5 classes, float64. */
export function parityWidths(): number[] {
  return [6, 8, 8, 8, 8, 8, 8, 8, 5];
}

function paritySpec(ctx: CheckContext, stages: number, microBatches: number, batch: number): PipelineSpec {
  return { seed: ctx.seedFor('parity', stages, microBatches), widths: parityWidths(), batch, microBatches, stages, steps: 2, lr: 0.1, dtype: 'float64' };
}

export const checks: Record<string, CheckFn> = {
  'parity-two-stages': async (ctx) => {
    expectTrainingParity(ctx, await runTraining(ctx, paritySpec(ctx, 2, 4, 8)));
  },
  'parity-four-stages': async (ctx) => {
    for (const m of [2, 6]) expectTrainingParity(ctx, await runTraining(ctx, paritySpec(ctx, 4, m, 12)));
    ctx.note('4 stages with 2 micro-batches (fewer than p - 1) and with 6: two SGD steps match one process on the whole batch');
  },
  'in-flight-per-stage': async (ctx) => {
    const run = await runTraining(ctx, paritySpec(ctx, 4, 8, 16));
    expectTrainingParity(ctx, run);
    ctx.note(expectInFlight(ctx, run));
  },
};
