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
import { expectMainStreamOnly, programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { singleProcessTraining, stageLayers, type PipelineSpec } from './data.ts';
import { MEMORY_RESULT, referenceLabel, stepLabel, trainingShape, type MemoryResult, type TrainingResult } from './programs.ts';

const ENTRY = 'src/1f1b.ts';
const EXPORT = 'oneFOneBStep';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'pipelineTraining' };
const timed = { module: programPath(import.meta.url, './programs.ts'), export: 'timedStep' };
const memoryProgram = { module: programPath(import.meta.url, './programs.ts'), export: 'memoryStep' };

export const TOLERANCE = { rtol: 1e-9, atol: 1e-12 };

/**
 * Tolerance of the timed and the memory runs' parity (float32): each
 * gradient entry is a sum over at most 768 rows of products whose rounding
 * (2^-24 each) the pipeline and one process do in another order; rtol
 * 1e-4 is hundreds of times that, and a wrong weight of a micro-batch (1/m,
 * or none), or a missing backward, moves entries by tens of percent.
 */
export const MEASURED_TOLERANCE = { rtol: 1e-4, atol: 1e-7 };

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
      ctx.expectClose(out.grads[s]!, want.grads[rank]!, { rank, label: `the gradients of stage ${rank} (${layers}, flat) after step ${s + 1} with ${setup(spec)}`, ...tolerance });
      ctx.expectClose(out.params[s]!, want.params[rank]!, { rank, label: `the parameters of stage ${rank} (${layers}, flat) after its SGD step ${s + 1} with ${setup(spec)}`, ...tolerance });
    });
  });
  const lastRank = spec.stages - 1;
  ctx.expectClose(run.outputs[lastRank]!.losses, ref.map((r) => r.loss), { rank: lastRank, label: `the whole batch's mean loss the last stage reports, per step, with ${setup(spec)}`, ...tolerance });
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
 * Margin on the work of the step against the reference micro-batches' (the
 * first, then m-1 that add into the gradients), as in exercise 11: the step
 * adds what the reference leaves out, the slices of the batch and the sum
 * of the inputs' gradient on stage 0 (bytes-bound ops on [B, 256], under
 * 0.2% of a stage's matmuls here); 3% is over ten times that, while
 * recomputing the forwards adds 33% and padding a schedule's bubble adds
 * (p-1)/m or more.
 */
export const WORK_MARGIN = 0.03;

const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;
const mflop = (f: number) => `${(f / 1e6).toFixed(2)} MFLOP`;

/**
 * The timed step must keep as many micro-batches in flight on every stage
 * as a training run of the same p and m does (width 8, float64: the
 * public checks' model), whichever that is: a schedule is judged for its
 * memory by activation-memory, and here only for acting the same when it is
 * timed (a step keyed on the timed model's width, say, that runs another
 * schedule there).
 */
async function expectSameSchedule(ctx: CheckContext, timedRun: TrainingRun): Promise<string> {
  const { spec } = timedRun;
  const plain = await runTraining(ctx, paritySpec(ctx, spec.stages, spec.microBatches, 2 * spec.microBatches));
  expectTrainingParity(ctx, plain);
  const most = (r: TrainingRun) => r.outputs.map((o) => Math.max(...o.inFlight.toArray()));
  const [timedMost, plainMost] = [most(timedRun), most(plain)];
  timedMost.forEach((n, s) => {
    if (n !== plainMost[s]) {
      ctx.fail(`stage ${s} with ${setup(spec)} held ${n} micro-batches in flight at once in the timed step, but ${plainMost[s]} in a training step of the same p and m on a narrower model: the step must run the same schedule whatever the model`, { rank: s, index: null, expected: plainMost[s]!, actual: n, label: `micro-batches in flight on stage ${s} in the timed step` });
    }
  });
  return `${setup(spec)}: ${timedMost.join(', ')} micro-batches in flight on stages 0 to ${spec.stages - 1}, as in a training step of the same shape`;
}

/**
 * Times one step and compares the bubble (the mean over stages of
 * 1 - compute_s / T, T the step's time) with (p-1)/(m+p-1), as exercise
 * 11 does: within 0.02 below, and 0.02 plus the 2(p-1) messages of the fill
 * and the drain (α + bytes/β each) above. 1F1B reorders the work, it does
 * not remove any: its bubble is GPipe's.
 *
 * A fraction alone can be padded, and a step can act otherwise when timed,
 * so the same run is checked whole: its gradients and parameters against
 * one process, its micro-batches in flight (those of a training step of
 * the same shape: see expectSameSchedule), and
 * its work against a micro-batch's forward and backward through each stage,
 * measured by the rank program in the same run (the first, and a later one
 * that adds into the gradients, c_s): every stage's main-stream FLOPs at
 * least (1 - WORK_MARGIN) times what its m micro-batches need (no work
 * outside the tensor library), its compute at most (1 + WORK_MARGIN) times
 * that (no padding, no recomputation), nothing computed on other streams
 * beyond WORK_MARGIN of it, no background stream at all (a stage's time is
 * its main stream's, and what a background stream computes or waits for
 * runs beside it; expectMainStreamOnly), and the step's time at most the critical path
 * of a pipeline of those times, (1 + WORK_MARGIN)·(Σ_s c_s + (m-1)·max_s
 * c_s) plus the 2(p-1) messages: the first micro-batch's forward and the
 * last one's backward cross every stage, and the slowest stage runs the
 * other m-1 micro-batches back to back, in either schedule.
 */
export async function expectBubble(ctx: CheckContext, spec: PipelineSpec): Promise<string> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: timed, args: [ctx.entry(ENTRY), spec, EXPORT, key], device: PIPELINE_DEVICE, returns: trainingShape(1) });
  const run: TrainingRun = { spec, outputs: result.ranks.map((r) => r.value as TrainingResult), result };
  expectTrainingParity(ctx, run, MEASURED_TOLERANCE);
  const inFlight = await expectSameSchedule(ctx, run);
  const find = (label: string) => result.device!.ranks.map((d, s) => {
    const r = d.regions.find((x) => x.label === label);
    if (!r) throw new Error(`BUG: stage ${s} has no region '${label}'`);
    return r;
  });
  const regions = find(stepLabel(key));
  const first = find(referenceLabel(key, 0));
  const next = find(referenceLabel(key, 1));
  const m = spec.microBatches;
  const stepUs = Math.max(...regions.map((r) => r.totalUs));
  const bubble = regions.reduce((s, r) => s + (1 - r.computeUs / stepUs), 0) / spec.stages;
  const messageUs = DEFAULT_COST.alphaUs + (Math.ceil(spec.batch / m) * spec.widths[1]! * 4) / DEFAULT_COST.bytesPerUs;
  const formula = bubbleFormula(spec.stages, m);
  const [low, high] = [formula - 0.02, formula + (2 * (spec.stages - 1) * messageUs) / stepUs + 0.02];
  const c = next.map((r) => r.computeUs);
  const stepLimitUs = (1 + WORK_MARGIN) * (c.reduce((a, b) => a + b, 0) + (m - 1) * Math.max(...c)) + 2 * (spec.stages - 1) * messageUs;
  const needed = regions.map((_, s) => ({ us: first[s]!.computeUs + (m - 1) * next[s]!.computeUs, flops: first[s]!.flops + (m - 1) * next[s]!.flops }));
  const work = regions.map((r, s) => `${ms(r.computeUs)} of ${ms(needed[s]!.us)}`).join(', ');
  const text = `p = ${spec.stages}, m = ${m}: bubble ${bubble.toFixed(3)} of a ${ms(stepUs)} step, (p-1)/(m+p-1) = ${formula.toFixed(3)}`;
  // First: a step that hid its waits measures a bubble that says nothing of its schedule.
  result.stats.forEach((st) => expectMainStreamOnly(ctx, `stage ${st.rank} with ${setup(spec)}`, st));
  if (bubble < low || bubble > high) {
    ctx.fail(`${text}: outside ${low.toFixed(3)} to ${high.toFixed(3)} (the formula, messages on the critical path and unequal stages). ${bubble > high ? 'The stages wait longer than the schedule needs: does each stage do its warm-up forwards back to back, and in the steady state start each forward or backward as soon as its input has arrived?' : 'Less idle time than the schedule allows: are all the micro-batches computed?'}`, { rank: null, index: null, expected: `${low.toFixed(3)} to ${high.toFixed(3)}`, actual: bubble.toFixed(3), label: 'bubble fraction of the step' });
  }
  regions.forEach((r, s) => {
    const at = `stage ${s} with ${setup(spec)}`;
    const need = needed[s]!;
    const needs = `m = ${m} micro-batches' forward and backward (${mflop(need.flops)}, ${ms(need.us)}, measured in the same run)`;
    const background = result.device!.ranks[s]!.streams.filter((x) => x.id !== 0).reduce((a, x) => a + x.computeUs, 0);
    if (r.flops < (1 - WORK_MARGIN) * need.flops) {
      ctx.fail(`${at} computed ${mflop(r.flops)} with the tensor library in the timed step, less than ${needs} less ${WORK_MARGIN * 100}%: do all the work with tensor ops, every micro-batch's forward and backward`, { rank: s, index: null, expected: `>= ${mflop((1 - WORK_MARGIN) * need.flops)}`, actual: mflop(r.flops), label: `FLOPs of the timed step on stage ${s}` });
    }
    if (r.computeUs > (1 + WORK_MARGIN) * need.us) {
      ctx.fail(`${at} computed for ${ms(r.computeUs)} in the timed step, more than ${needs} plus ${WORK_MARGIN * 100}%: a pipeline step computes each micro-batch's forward and backward once, and nothing else`, { rank: s, index: null, expected: `<= ${ms((1 + WORK_MARGIN) * need.us)}`, actual: ms(r.computeUs), label: `compute of the timed step on stage ${s}` });
    }
    if (background > WORK_MARGIN * need.us) {
      ctx.fail(`${at} computed for ${ms(background)} on background streams; a pipeline stage computes on its main stream`, { rank: s, index: null, expected: `<= ${ms(WORK_MARGIN * need.us)}`, actual: ms(background), label: `background compute on stage ${s}` });
    }
  });
  if (stepUs > stepLimitUs) {
    ctx.fail(`${text}: the step took longer than a pipeline of the micro-batch times measured in the same run, (1 + ${WORK_MARGIN})·(Σ_s c_s + (m-1)·max_s c_s) plus the fill and drain messages = ${ms(stepLimitUs)}: does each stage do its warm-up forwards back to back, and in the steady state start each forward or backward as soon as its input has arrived?`, { rank: null, index: null, expected: `<= ${ms(stepLimitUs)}`, actual: ms(stepUs), label: 'time of the step' });
  }
  return `${text}; at most ${ms(stepLimitUs)}; compute per stage ${work} needed; ${inFlight}`;
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
 * count the micro-batches exactly. The memory run's gradients, parameters
 * and micro-batches in flight are checked too, so that a step cannot do
 * less when it is measured.
 */
export async function expectActivationMemory(ctx: CheckContext, spec: PipelineSpec): Promise<string> {
  const key = ctx.markKey();
  const result = await ctx.run({ worldSize: spec.stages, program: memoryProgram, args: [ctx.entry(ENTRY), spec, EXPORT, key], device: 'course', markKey: key, returns: MEMORY_RESULT });
  const run: TrainingRun = { spec, outputs: result.ranks.map((r) => r.value as MemoryResult), result };
  expectTrainingParity(ctx, run, MEASURED_TOLERANCE);
  const inFlight = expectInFlight(ctx, run);
  const lines: string[] = [];
  const over: { s: number; peak: number; limit: number; perMicroBatch: number; grads: number }[] = [];
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  result.device!.ranks.forEach((d, s) => {
    const marks = d.memory.marks.filter((k) => k.trusted);
    const before = marks.find((k) => k.label === 'before the step');
    const after = marks.find((k) => k.label === 'after the step');
    if (!before || !after) throw new Error(`BUG: stage ${s} is missing its trusted marks`);
    const perMicroBatch = (result.ranks[s]!.value as MemoryResult).perMicroBatch;
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
  return `${setup(spec)}: peak memory of the step above the start · ${lines.join(' · ')}; ${inFlight}`;
}

/** The public checks' model: 8 layers of width 8 on 6 inputs and 5 classes, float64. */
export function parityWidths(): number[] {
  return [6, 8, 8, 8, 8, 8, 8, 8, 5];
}

export function paritySpec(ctx: CheckContext, stages: number, microBatches: number, batch: number): PipelineSpec {
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
