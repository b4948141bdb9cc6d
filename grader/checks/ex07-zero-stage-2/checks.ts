/**
 * Public checks of ex07-zero-stage-2. Each trains the seeded MLP of data.ts
 * with the submission's Zero2AdamW on N rank workers, every rank on its own
 * mini-batches, and compares every rank's parameters after each step with
 * single-process AdamW on the combined batch, computed here. The memory
 * check runs the same training on the virtual device and reads, from the
 * marks its own rank program made with the check's key, what the gradients
 * took during one step's backward pass.
 */
import { chunkBounds } from '@dtlab/tensor';
import type { LaunchResult, MemoryMark, RankStats, TraceEvent } from '@dtlab/runtime';
import { programPath, fenceTags, splitPhases, type CheckContext, type CheckFn, type ValueShape } from '@dtlab/grader';
import { expectParity, type ParamLayout } from '../ex03-zero-sharding/checks.ts';
import type { StepsResult } from '../ex03-zero-sharding/programs.ts';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS, largestParam, paramCount, paramLayout, singleProcessTraining, type Experiment } from './data.ts';
import { FENCES, MARKS, type Measure } from './programs.ts';

const ENTRY = 'src/zero2-adamw.ts';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'zero2Training' };

/**
 * The MLP of the checks: 16-24-...-24-13, twenty layers with tanh between,
 * P = 11533 parameter elements (1 mod 2, 3 and 4, 3 mod 5: uneven shards
 * that tell chunkBounds from blocks of ⌈P/N⌉), the largest parameter a
 * 24×24 weight of 576 elements. Deep and narrow on purpose: the full
 * gradient is twenty times a layer's, so a rank that keeps it stands out
 * against one that keeps a shard and a bucket.
 */
export const SIZES = [16, ...Array.from({ length: 19 }, () => 24), 13];
/** Bucket size of the checks: 4 KiB, 1024 float32 elements, about two layers. */
export const BUCKET_BYTES = 4096;

/**
 * Float32 parity over a few steps: the two runs add the same numbers in a
 * different order (per-rank means then an average across ranks, against one
 * mean over the combined batch), so only rounding may differ; eps = 1e-3
 * keeps Adam's g/(|g| + eps) from turning the rounding of a near-zero
 * gradient into a visible step. The reference solution stays within 1e-6 of
 * the reference on these runs.
 */
export const TOLERANCE = { rtol: 1e-4, atol: 1e-5 };

/** What the training program hands back: parameters after each step, and a checkpoint when one was asked for. */
export const STEPS_RESULT: ValueShape = { object: { params: { array: 'tensor' } } };

/** The experiment of a check: its seed comes from the grading seed, the check and `keys`. */
export function experiment(ctx: CheckContext, over: Partial<Experiment>, ...keys: (string | number)[]): Experiment {
  return { seed: ctx.seedFor('experiment', ...keys), sizes: SIZES, batchPerRank: 4, steps: 3, opts: CHECK_OPTIONS, bucketBytes: BUCKET_BYTES, ...over };
}

/** The layout of the parameters, to report a wrong value by parameter name and index. */
export function layoutOf(e: Experiment): ParamLayout {
  return paramLayout(e);
}

/** One training launch: what every rank returned, its traffic, and the device's report when it ran on one. */
export interface TrainingRun {
  e: Experiment;
  outputs: StepsResult[];
  stats: RankStats[];
  trace: TraceEvent[];
  device?: LaunchResult['device'];
}

/**
 * Where a memory run measures: step `step` (from 0) of experiment `e`, with
 * the check's secret mark key and fence tags derived from it for this
 * launch (the experiment's seed tells the launches of one check apart).
 */
export function measureFor(ctx: CheckContext, e: Experiment, step: number): Measure {
  const key = ctx.markKey();
  return { step, key, fences: fenceTags(key, e.seed, Object.keys(FENCES).length) };
}

/** Trains `e` on `worldSize` ranks; with `measure`, on the course's virtual device with the check's marks. */
export async function runTraining(ctx: CheckContext, e: Experiment, worldSize: number, measure?: Measure): Promise<TrainingRun> {
  const r = await ctx.run({
    worldSize,
    program: training,
    args: [ctx.entry(ENTRY), e, ...(measure ? [measure] : [])],
    returns: STEPS_RESULT,
    ...(measure ? { device: 'course' as const, markKey: measure.key, freshWorkers: true } : {}),
  });
  return { e, outputs: r.ranks.map((o) => o.value as StepsResult), stats: r.stats, trace: r.trace, device: r.device };
}

/** Every rank's parameters after every step must equal single-process AdamW on the combined batch. */
export function expectTrainingParity(ctx: CheckContext, run: TrainingRun, worldSize: number): void {
  expectParity(ctx, run.outputs, singleProcessTraining(run.e, worldSize), layoutOf(run.e), TOLERANCE);
}

/** The figures of one rank's measured step, in bytes (see expectGradientMemory). */
export interface GradientMemory {
  rank: number;
  /** What the optimizer holds between steps beyond its two moments. */
  between: number;
  /** The most the rank held at a mark during backward, beyond what it held before it. */
  held: number;
  /** The device's peak during backward (an upper bound of the true peak), beyond what the rank held before it. */
  peak: number;
  /** Where `held` was reached: the mark's position among the layers. */
  heldAt: string;
}

/**
 * The bounds on gradient memory, in bytes, from P, N, the bucket size and
 * the largest parameter L (elements of float32):
 *
 * - held: 4·(⌈P/N⌉ + 2·B + 2·L) + 4 KiB. ⌈P/N⌉ for this rank's shard of the
 *   mean gradient, two buckets (one filling while one is reduced) of
 *   B = ⌈bucketBytes/4⌉ + L elements at most (a bucket closes once it holds
 *   bucketBytes, so it overshoots by less than a parameter), and 2·L for the
 *   gradient backward is producing and its accumulated copy; 4 KiB for
 *   bookkeeping. Plain data parallelism needs 4·P from the last layer on.
 * - peak: held + 4·3·B: while a bucket is reduced, the collectives' working
 *   copies of its pieces and the partial sums received count too, and the
 *   device's peak counts everything allocated since the last collection.
 */
export function gradientBounds(e: Experiment, worldSize: number): { held: number; peak: number; parts: string } {
  const p = paramCount(e);
  const l = largestParam(e);
  const shard = Math.ceil(p / worldSize);
  const bucket = Math.ceil(e.bucketBytes / BYTES_PER_ELEMENT) + l;
  const held = BYTES_PER_ELEMENT * (shard + 2 * bucket + 2 * l) + 4096;
  return { held, peak: held + BYTES_PER_ELEMENT * 3 * bucket, parts: `4·(⌈P/N⌉ + 2·B + 2·L) + 4 KiB with P = ${p}, N = ${worldSize}, B = ${bucket} (bucketBytes/4 + L), L = ${l}` };
}

/** The check's trusted marks of one rank, in order, or a message saying what is missing. */
function trustedMarks(marks: readonly MemoryMark[]): MemoryMark[] | string {
  const mine = marks.filter((m) => m.trusted);
  const labels = mine.map((m) => m.label);
  const want = [MARKS.base, MARKS.beforeForward, MARKS.beforeBackward];
  if (want.some((l, i) => labels[i] !== l) || labels.at(-1) !== MARKS.afterBackward) return `the marks were ${labels.slice(0, 6).join(', ')}…`;
  return mine;
}

/**
 * Reads one rank's marks: between steps (before the forward, less before the
 * optimizer existed, less the moments), held (the largest bytes in use at a
 * mark during backward, each after a collection, less before the backward)
 * and peak (the largest peak between two of those marks, less before the
 * backward). Activations are in use before the backward already, and only
 * leave after it, so what backward adds is gradients and their buffers.
 */
export function readGradientMemory(ctx: CheckContext, run: TrainingRun, rank: number): GradientMemory {
  const stats = run.device?.ranks[rank];
  const marks = stats ? trustedMarks(stats.memory.marks) : 'no device report';
  if (typeof marks === 'string') return ctx.fail(`BUG: rank ${rank}: the memory program's marks are missing (${marks})`);
  const p = paramCount(run.e);
  const worldSize = run.outputs.length;
  const { start, end } = chunkBounds(p, worldSize)[rank]!;
  const moments = 2 * BYTES_PER_ELEMENT * (end - start);
  const [base, beforeForward, beforeBackward] = marks as [MemoryMark, MemoryMark, MemoryMark];
  const during = marks.slice(3);
  let held = 0;
  let heldAt = 'before the backward';
  during.forEach((m, i) => {
    const h = m.inUseBytes - beforeBackward.inUseBytes;
    if (h > held) {
      held = h;
      heldAt = i === during.length - 1 ? 'at the end of the backward' : `after the weight gradient of the ${ordinal(i + 1)} layer from the top`;
    }
  });
  const peak = Math.max(0, ...during.map((m) => m.peakBytes - beforeBackward.inUseBytes));
  return { rank, between: beforeForward.inUseBytes - base.inUseBytes - moments, held, peak, heldAt };
}

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${s}`;
}

/**
 * Checks one measured run: every rank's parameters after the last step
 * (parity), then, per rank, the gradient memory of the measured step's
 * backward: between + held within the held bound, between + peak within the
 * peak bound (see gradientBounds). Returns the figures, for notes.
 */
export function expectGradientMemory(ctx: CheckContext, run: TrainingRun, worldSize: number, measure: Measure): GradientMemory[] {
  const expected = singleProcessTraining(run.e, worldSize);
  expectParity(ctx, run.outputs, expected.slice(-1), { ...layoutOf(run.e), names: layoutOf(run.e).names.map((n) => `${n} (the memory run, after its last step)`) }, TOLERANCE, run.e.steps - 1);
  const bounds = gradientBounds(run.e, worldSize);
  const p = paramCount(run.e);
  const full = BYTES_PER_ELEMENT * p;
  const when = `step ${measure.step + 1} with ${worldSize} ranks (P = ${p}, bucketBytes ${run.e.bucketBytes})`;
  return run.outputs.map((_, rank) => {
    const g = readGradientMemory(ctx, run, rank);
    const held = g.between + g.held;
    if (held > bounds.held) {
      ctx.fail(
        `rank ${rank}: in the backward pass of ${when} it held ${held} bytes of gradients and gradient buffers (${g.between} kept between steps beside the moments, ${g.held} more ${g.heldAt}), more than a shard of the mean gradient and a bucket or two need: ${bounds.held} bytes = ${bounds.parts}. The full gradient is ${full} bytes: a rank must not hold it, even for a moment of the step (pnpm hint ex07)`,
        { rank, index: null, expected: `<= ${bounds.held}`, actual: held, label: `bytes of gradients held by rank ${rank} during backward` },
      );
    }
    const peak = g.between + g.peak;
    if (peak > bounds.peak) {
      ctx.fail(
        `rank ${rank}: in the backward pass of ${when} its memory peaked ${g.peak} bytes above what it held before the backward (with ${g.between} kept between steps beside the moments: ${peak}), more than ${bounds.peak} bytes, the bound on a shard, two buckets being filled and reduced and the gradient in hand (${bounds.parts}, plus 4·3·B for the collectives' working copies while a bucket is reduced): something as large as the full gradient (${full} bytes) lived for a while`,
        { rank, index: null, expected: `<= ${bounds.peak}`, actual: peak, label: `peak bytes of rank ${rank} during backward` },
      );
    }
    return g;
  });
}

/** Bytes all ranks sent each other in the measured step's backward, and from its end to the end of the run. */
export interface StepTraffic {
  backward: number;
  after: number;
}

/**
 * The traffic a measured step must show, in bytes (float32), from P, N, the
 * bucket bound B = ⌈bucketBytes/4⌉ + L (gradientBounds) and the trace cut at
 * the check's secret fences. Memory alone cannot show that the buckets are
 * reduced as backward runs: a submission can keep the whole gradient in a
 * plain JS array, which the device's meter does not see. The traffic can:
 *
 * - during the backward, all ranks together send each other at least
 *   4·(N-1)·(P - B): every bucket but the last (which holds at most B
 *   elements) must be reduced by then, and a reduction of n elements needs
 *   at least (N-1)·n sent, since each of the N-1 ranks that do not own an
 *   element must pass its contribution on. Self-sends carry nothing to
 *   anyone and do not count. The reference reduces every bucket within the
 *   backward (4·(N-1)·P): a margin of 4·(N-1)·B.
 * - from the end of the backward on, all ranks together send at least
 *   4·(N-1)·P: the all-gather of the updated shards, since every element of
 *   the model must reach the N-1 ranks that do not own it. A submission that
 *   sends nothing after the backward has updated every parameter itself,
 *   from the whole mean gradient (reduced to every rank during the backward):
 *   plain data parallelism, with the gradient and both moments kept whole,
 *   wherever it keeps them.
 * - from the end of the backward on, all ranks together send at most
 *   4·(N-1)·(P + 2·(B + N)): the all-gather of the updated shards ((N-1)·P
 *   for a ring or a direct all-gather) and the last bucket, even as a ring
 *   all-reduce (2·(N-1)·N·⌈B/N⌉ at most). The starter's reduction after the
 *   backward sends 4·(N-1)·P more than the all-gather: above the bound by
 *   4·(N-1)·(P - 2·(B + N)), at least 4·4·6275 bytes on the checks' runs
 *   (P = 11533; the largest B is 2624, 8 KiB buckets with N = 5). Traffic sent in the
 *   backward only to pass the first bound (and the reduction made after it
 *   all the same) fails this one.
 */
export function trafficBounds(e: Experiment, worldSize: number): { backward: number; afterLeast: number; after: number; parts: string } {
  const p = paramCount(e);
  const b = Math.ceil(e.bucketBytes / BYTES_PER_ELEMENT) + largestParam(e);
  const n = worldSize - 1;
  return {
    backward: BYTES_PER_ELEMENT * n * Math.max(0, p - b),
    afterLeast: BYTES_PER_ELEMENT * n * p,
    after: BYTES_PER_ELEMENT * n * (p + 2 * (b + worldSize)),
    parts: `P = ${p}, N = ${worldSize}, B = ${b} (bucketBytes/4 + L)`,
  };
}

/**
 * Checks the traffic of a measured step against trafficBounds: enough
 * reduced during the backward, no more than an all-gather and one bucket
 * after it. Returns the figures, for notes.
 */
export function expectReductionDuringBackward(ctx: CheckContext, run: TrainingRun, worldSize: number, measure: Measure): StepTraffic {
  const phases = splitPhases(run.trace, worldSize, measure.fences);
  const when = `step ${measure.step + 1} with ${worldSize} ranks`;
  if (typeof phases === 'string') {
    ctx.fail(`${when}: the check's markers around the backward pass did not come through as sent: ${phases}. Send and receive through the Comm as it is, without changing its methods`, { rank: null, index: null, expected: 'the check\'s fences, in order', actual: phases, label: 'fences around the backward' });
  }
  // Phase k is what a rank sent between fence k-1 and fence k: phase 1 the backward, phases 2 and 3 the optimizer's step and anything later.
  const inBackward = phases.map((r) => r.toOthers[FENCES.afterBackward]!);
  const afterwards = phases.map((r) => r.all.slice(FENCES.afterBackward + 1).reduce((a, x) => a + x, 0));
  const backward = inBackward.reduce((a, x) => a + x, 0);
  const after = afterwards.reduce((a, x) => a + x, 0);
  const bounds = trafficBounds(run.e, worldSize);
  const perRank = (bytes: number[]) => bytes.map((x, rank) => `rank ${rank} ${x}`).join(', ');
  if (backward < bounds.backward) {
    ctx.fail(
      `in the backward pass of ${when} the ranks sent each other ${backward} bytes of gradients (${perRank(inBackward)}), less than reducing every bucket but the last needs: 4·(N-1)·(P - B) = ${bounds.backward} bytes (${bounds.parts}). The buckets must be reduced while backward is still producing the gradients, not after it: until then each rank holds its whole gradient, wherever it keeps it (pnpm hint ex07)`,
      { rank: null, index: null, expected: `>= ${bounds.backward}`, actual: backward, label: `bytes of gradients sent during the backward of ${when}` },
    );
  }
  if (after < bounds.afterLeast) {
    ctx.fail(
      `after the backward pass of ${when} the ranks sent each other ${after} bytes (${perRank(afterwards)}), less than the all-gather of the updated shards needs: 4·(N-1)·P = ${bounds.afterLeast} bytes (${bounds.parts}): every element of the model must reach the N-1 ranks that do not own it. A rank that gathers nothing has updated every parameter itself, from the whole mean gradient: plain data parallelism, with the gradient and both moments kept whole, wherever it keeps them. Reduce-scatter each bucket, step this rank's shard, then all-gather the shards (pnpm hint ex07)`,
      { rank: null, index: null, expected: `>= ${bounds.afterLeast}`, actual: after, label: `bytes sent after the backward of ${when}` },
    );
  }
  if (after > bounds.after) {
    ctx.fail(
      `after the backward pass of ${when} the ranks sent ${after} bytes (${perRank(afterwards)}), more than the all-gather of the updated shards and the last bucket's reduction need: 4·(N-1)·(P + 2·(B + N)) = ${bounds.after} bytes (${bounds.parts}). The gradients were reduced after the backward: every bucket but the last must be reduced while backward runs`,
      { rank: null, index: null, expected: `<= ${bounds.after}`, actual: after, label: `bytes sent after the backward of ${when}` },
    );
  }
  return { backward, after };
}

/** A note with the figures of a memory run. */
export function memoryNote(figures: GradientMemory[], e: Experiment, worldSize: number): string {
  const b = gradientBounds(e, worldSize);
  const most = Math.max(...figures.map((f) => f.between + f.held));
  const peak = Math.max(...figures.map((f) => f.between + f.peak));
  return `N = ${worldSize}: gradients held at most ${most} bytes (bound ${b.held}), peak ${peak} (bound ${b.peak}), against ${BYTES_PER_ELEMENT * paramCount(e)} for the full gradient`;
}

/** A note with the traffic of a measured step. */
export function trafficNote(t: StepTraffic, e: Experiment, worldSize: number): string {
  const b = trafficBounds(e, worldSize);
  return `bytes sent in the backward ${t.backward} (at least ${b.backward}), after it ${t.after} (at most ${b.after})`;
}

export const checks: Record<string, CheckFn> = {
  'two-ranks': async (ctx) => {
    const e = experiment(ctx, { steps: 2 }, 2);
    expectTrainingParity(ctx, await runTraining(ctx, e, 2), 2);
  },
  'three-ranks-unused': async (ctx) => {
    // A parameter no forward uses: its .grad stays null, which counts as a zero gradient, and its bucket is never completed by backward.
    const e = experiment(ctx, { steps: 3, unused: [6] }, 3);
    expectTrainingParity(ctx, await runTraining(ctx, e, 3), 3);
    ctx.note(`P = ${paramCount(e)} parameter elements, the last 6 of them a parameter no forward uses: 3 steps match single-process AdamW on every rank`);
  },
  'gradient-memory': async (ctx) => {
    const worldSize = 4;
    const e = experiment(ctx, { steps: 2 }, worldSize);
    const measure = measureFor(ctx, e, 1);
    const run = await runTraining(ctx, e, worldSize, measure);
    const figures = expectGradientMemory(ctx, run, worldSize, measure);
    const traffic = expectReductionDuringBackward(ctx, run, worldSize, measure);
    ctx.note(`${memoryNote(figures, e, worldSize)}; ${trafficNote(traffic, e, worldSize)}`);
  },
};
