/**
 * Public checks of ex05-bucketed-overlap. Each trains a seeded MLP with the
 * submission's BucketedDataParallel on N rank workers, every rank on its own
 * part of each step's batch, and compares every rank's parameters with one
 * process trained here, at grade time, on the combined batch. Two checks of
 * how also read the run: the fabric's trace (which all-reduces each step
 * made, and how large) and the virtual device's clock (how long the step
 * waited for them). Before the clock is believed, the overlap checks make
 * sure it kept to the data: each gradient came from backward on the main
 * stream (expectGradientsFromBackward), no all-reduce left before as many
 * gradient elements as it carried were complete (expectSendsAfterGradients),
 * what each carried were values of gradients complete when it left
 * (expectCarriedGradients), and background streams moved their clocks only
 * by their own work and their waits (expectBackgroundStreamsWork).
 *
 * Tolerance of the values: float32, rtol 1e-5 and atol 1e-6, as in ex04
 * (the same computation: a mean over each rank's part, then a ring average,
 * against one mean over the whole batch). Measured between the reference
 * solution and the reference over 120 runs of 4 SGD steps (6 seeds, 1 to 5
 * ranks, the hidden MLP with 1, 2 and 3 buckets and the branching model),
 * the worst |diff| / max(|expected|, 0.1) was 3.4e-7, 30 times under it.
 */
import { estimateTime } from '@dtlab/collectives';
import type { LaunchResult, RankDeviceStats } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { programPath, fenceTags, firstAtLeast, type CheckContext, type CheckFn } from '@dtlab/grader';
import { buildMlp, expectedBuckets, namedUniqueParameters, rankBatch, singleProcessTraining, type BucketSpec, type ExpectedBucket, type ModelBuilder, type Trajectory } from './data.ts';
import { regionLabels, type BatchFn, type TimedTrajectory } from './programs.ts';
import { callsPerStep, type TracedCall } from './trace.ts';

const ENTRY = 'src/bucketed-data-parallel.ts';
const programs = programPath(import.meta.url, './programs.ts');
/** See the file comment. */
export const TOLERANCE = { rtol: 1e-5, atol: 1e-6 };
/**
 * What a timed run keeps of each message in its trace (expectCarriedGradients):
 * its first values, and values at positions the launcher draws at random for
 * each message, which no rank can know.
 */
export const CARRIED_VALUES = 4;
export const SAMPLED_VALUES = 64;
/** How much a step's background streams may compute, against one forward and backward (expectBackgroundStreamsWork). */
export const BACKGROUND_COMPUTE_SHARE = 0.1;
/** The network of every launch (the runtime's default): α = 10 µs, 1250 bytes per µs. */
export const COST = { alphaUs: 10, bytesPerUs: 1250 };

/** A model, its data and the rank programs that train it: the public MLP unless a check gives another. */
export interface Trainee {
  build: ModelBuilder;
  batch: BatchFn;
  /** The rank program, and the one that times each step on the virtual device. */
  train: { module: string; export: string };
  timed: { module: string; export: string };
}
const MLP: Trainee = { build: buildMlp, batch: rankBatch, train: { module: programs, export: 'trainBucketed' }, timed: { module: programs, export: 'timeBucketed' } };

/**
 * Five layers of 16·16 + 16 = 272 parameters (1088 bytes of gradient each):
 * bucket sizes that are whole layers make the same buckets whichever end of
 * the model they are filled from, so the bucket count does not depend on the
 * order, only on the rule (and on sending the last, partial bucket).
 */
export const EVEN_SIZES = [16, 16, 16, 16, 16, 16];
export const LAYER_BYTES = (16 * 16 + 16) * 4;

const ranksWord = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;

/** One training launch: every rank's parameters after each step, and the launch (trace, device figures). */
export interface TrainingRun {
  spec: BucketSpec;
  worldSize: number;
  outputs: Trajectory[];
  result: LaunchResult;
  /** The tags of the run's fences, before each step and after the last (fences.ts). */
  fences: number[];
  /** A timed run's, per rank: what its program returned, when backward completed each gradient included (programs.ts). */
  timing?: TimedTrajectory[];
}

/** Trains on `worldSize` ranks (on the virtual device, timing each step, with `timed`). */
export async function runTraining(ctx: CheckContext, worldSize: number, spec: BucketSpec, trainee: Trainee = MLP, timed = false): Promise<TrainingRun> {
  const k = namedUniqueParameters(trainee.build(spec, 0)).length;
  const returns = { array: { array: 'tensor', length: k }, length: spec.steps } as const;
  // Secret to this check and launch (its seed and world size), so a submission cannot send one.
  const fences = fenceTags(ctx.markKey(), `${spec.seed} ${worldSize} ${timed ? 'timed' : 'plain'}`, spec.steps + 1);
  if (timed) {
    const ready = { array: { array: 'number', length: k }, length: spec.steps } as const;
    const backwardAt = { array: 'number', length: spec.steps } as const;
    const referenceAfter = { array: 'number', length: k } as const;
    const gradValues = { array: { array: 'tensor', length: k }, length: spec.steps } as const;
    const result = await ctx.run({
      worldSize,
      program: trainee.timed,
      args: [ctx.entry(ENTRY), spec, fences, ctx.markKey()],
      returns: { object: { steps: returns, ready, backwardAt, referenceAfter, gradValues } },
      device: 'course',
      traceHead: CARRIED_VALUES,
      traceSample: SAMPLED_VALUES,
    });
    const values = result.ranks.map((r) => r.value as TimedTrajectory);
    return { spec, worldSize, outputs: values.map((v) => v.steps), result, fences, timing: values };
  }
  const result = await ctx.run({ worldSize, program: trainee.train, args: [ctx.entry(ENTRY), spec, fences], returns });
  return { spec, worldSize, outputs: result.ranks.map((r) => r.value as Trajectory), result, fences };
}

/**
 * Every rank's parameters after every step must equal the single-process
 * reference within TOLERANCE, and rank 0's bit for bit.
 */
export function expectParity(ctx: CheckContext, run: TrainingRun, trainee: Trainee = MLP): void {
  const { spec, worldSize, outputs } = run;
  const names = namedUniqueParameters(trainee.build(spec, 0)).map(([n]) => n);
  const expected = singleProcessTraining(spec, worldSize, trainee.build, trainee.batch);
  const at = `with ${ranksWord(worldSize)} and bucketBytes ${spec.bucketBytes}`;
  for (let s = 0; s < spec.steps; s++) {
    outputs.forEach((steps, rank) => names.forEach((name, i) => ctx.expectClose(steps[s]![i]!, expected[s]![i]!, { rank, label: `${name} after SGD step ${s + 1} ${at}`, ...TOLERANCE })));
  }
  const last = (o: Trajectory): Tensor[] => o[spec.steps - 1]!;
  outputs.slice(1).forEach((o, k) => names.forEach((name, i) => ctx.expectEqual(last(o)[i]!, last(outputs[0]!)[i]!, { rank: k + 1, label: `${name} after step ${spec.steps} ${at}, against rank 0's, bit for bit` })));
}

const list = (b: ExpectedBucket) => (b.names.length > 4 ? `${b.names.slice(0, 2).join(', ')}, ... ${b.names.at(-1)}` : b.names.join(', '));

/**
 * Each step's exchanges, read from the run's trace (trace.ts); a trace whose
 * fences cannot be read, or with messages after the last step, fails.
 */
export function tracedCalls(ctx: CheckContext, run: TrainingRun): TracedCall[][] {
  const calls = callsPerStep(run.result.trace, run.worldSize, run.fences);
  if (typeof calls === 'string') {
    ctx.fail(`with ${ranksWord(run.worldSize)}, the steps' all-reduces cannot be read from the trace: ${calls}. The check fences each step with messages of its own; send only to other ranks, and only from inside the step (forward, backward, finishGradientSynchronization)`, { rank: null, index: null, expected: 'every message inside a step', actual: calls, label: `the trace with ${ranksWord(run.worldSize)}` });
  }
  return calls;
}

/**
 * Every step must make exactly the README's buckets' all-reduces, one ring
 * all-reduce each, in bucket order, and nothing else: read from the trace
 * (see trace.ts), in bytes. A plain send under any tag counts as an
 * exchange of its own.
 */
export function expectBucketCalls(ctx: CheckContext, run: TrainingRun, trainee: Trainee = MLP): ExpectedBucket[] {
  const { spec, worldSize } = run;
  const buckets = expectedBuckets(trainee.build(spec, 0), spec.bucketBytes);
  const rule = `bucketBytes ${spec.bucketBytes} gives ${buckets.length} bucket${buckets.length === 1 ? '' : 's'} (${buckets.map((b) => `${b.elements} elements: ${list(b)}`).join('; ')})`;
  const ringBytes = (elements: number) => 2 * (worldSize - 1) * elements * 4;
  const elementsOf = (bytes: number) => bytes / 4 / (2 * (worldSize - 1));
  tracedCalls(ctx, run).forEach((calls, s) => {
    const at = `step ${s + 1} with ${ranksWord(worldSize)}`;
    if (calls.length !== buckets.length) {
      const sizes = calls.map((c) => `${elementsOf(c.bytes)}${c.index === null ? ` by plain sends tagged ${c.tag}` : ''}`).join(', ');
      ctx.fail(`${at} made ${calls.length} collective call${calls.length === 1 ? '' : 's'} carrying gradients${calls.length ? ` (of ${sizes} elements)` : ''}, but ${rule}: one all-reduce per bucket, the last, partly filled one included`, {
        rank: null,
        index: null,
        expected: `${buckets.length} all-reduces`,
        actual: `${calls.length} calls`,
        label: `all-reduces in ${at}`,
      });
    }
    calls.forEach((call, k) => {
      const want = buckets[k]!;
      if (call.index === null || call.silent.length > 0 || call.bytes !== ringBytes(want.elements)) {
        const got =
          call.index === null
            ? `it is plain sends tagged ${call.tag} (${call.bytes} bytes), not a collective call`
            : call.silent.length > 0
              ? `ranks ${call.silent.join(', ')} sent nothing in it`
              : `it sent ${call.bytes} bytes over all ranks, which a ring all-reduce of ${elementsOf(call.bytes)} float32 elements sends`;
        ctx.fail(`all-reduce ${k + 1} of ${at} is not bucket ${k}'s ring all-reduce: ${got}; ${rule}, and a ring all-reduce of n elements sends 2(N-1)·n·4 bytes (allReduce with the default ring, one flat tensor a bucket)`, {
          rank: null,
          index: k,
          expected: `${ringBytes(want.elements)} bytes (bucket ${k}: ${want.elements} elements)`,
          actual: `${call.bytes} bytes`,
          label: `all-reduce ${k + 1} of ${at}`,
        });
      }
    });
  });
  return buckets;
}

/** The per-rank figures of a region, read defensively: a rank whose program did not reach it fails the check. */
function region(ctx: CheckContext, d: RankDeviceStats, label: string, what: string, calls: number): { flops: number; computeUs: number; waitUs: number; totalUs: number } {
  const r = d.regions.find((g) => g.label === label);
  if (!r || r.calls !== calls) {
    ctx.fail(`rank ${d.rank}: the check's ${what} region ran ${r?.calls ?? 0} times, expected ${calls}`, { rank: d.rank, index: null, expected: calls, actual: r?.calls ?? 0, label: `${what} region` });
  }
  return { flops: r.flops / calls, computeUs: r.computeUs / calls, waitUs: (r.exposedCommUs + r.idleUs) / calls, totalUs: r.totalUs / calls };
}

const us = (x: number) => `${x.toFixed(1)} µs`;

/** What the rules of a timed run read beside it: the model's parameter names and sizes (namedUniqueParameters order) and each step's traced calls. */
interface Model {
  names: string[];
  numels: number[];
  calls: TracedCall[][];
}

/**
 * An all-reduce carries gradients, so it cannot leave before they exist: on
 * every rank, when a step's all-reduce k sends its first message, backward
 * must have completed at least as many gradient elements as all-reduces 1
 * to k carry (a ring all-reduce of n elements sends 2(N-1)·n·4 bytes, which
 * gives n from the trace). Completion times are read on the rank's clock by
 * the check's own hook (gradientClock in programs.ts). The rule counts
 * elements, not names, so it holds whatever the buckets are (the
 * bucket-count check judges those).
 *
 * Why: the overlap bound reads each stream's clock, and a background stream
 * keeps the clock it was started with until it waits for something. The
 * runtime carries time through what a stream waits for (work.wait(), a
 * promise another stream settled), but not through memory: a stream started
 * early that finds its bucket's gradients through a counter the main
 * stream's hooks advance (polling it with `await Promise.resolve()`, which
 * it settles itself) reads gradients that, on the clock, do not exist yet.
 * The overlap checks' model has layers that shrink towards the output, so a
 * bucket sent before its gradients were complete is always short of them.
 * A thousandth of a microsecond of margin, for the rounding of sums of
 * virtual times.
 */
export function expectSendsAfterGradients(ctx: CheckContext, run: TrainingRun, model: Model): void {
  const { worldSize, timing } = run;
  if (!timing) throw new Error('BUG: expectSendsAfterGradients needs a timed run');
  if (worldSize === 1) return;
  const elementsOf = (bytes: number) => bytes / 4 / (2 * (worldSize - 1));
  model.calls.forEach((calls, s) => {
    const at = `step ${s + 1} with ${ranksWord(worldSize)}`;
    for (let rank = 0; rank < worldSize; rank++) {
      const times = timing[rank]!.ready[s]!;
      if (times.some((t) => t < 0)) continue; // expectGradientsFromBackward names it
      // When each count of gradient elements was complete: the parameters in the order backward completed them.
      const done = model.names.map((name, i) => ({ name, numel: model.numels[i]!, at: times[i]! })).sort((x, y) => x.at - y.at);
      let carried = 0;
      calls.forEach((call, k) => {
        carried += elementsOf(call.bytes);
        const leftUs = call.leftUs[rank]!;
        if (!Number.isFinite(leftUs)) return;
        const have = done.filter((d) => d.at <= leftUs + 1e-3).reduce((a, d) => a + d.numel, 0);
        if (have >= carried) return;
        let sum = 0;
        const enoughAt = done.find((d) => (sum += d.numel) >= carried);
        const when = enoughAt ? `${us(enoughAt.at)}, with ${enoughAt.name}'s` : 'never: the model has fewer';
        ctx.fail(
          `rank ${rank}: in ${at}, all-reduce ${k + 1} sent its first message at ${us(leftUs)} of virtual time, when backward had completed ${have} gradient elements, but ${k === 0 ? 'it carries' : `all-reduces 1 to ${k + 1} carry`} ${carried}: a message cannot carry a gradient that does not exist yet (backward completed that many at ${when}). Start a bucket's all-reduce once its gradients are complete (from their post-accumulate-grad hooks), not on a stream started earlier and held on a promise`,
          { rank, index: k, expected: `>= ${carried} gradient elements complete`, actual: `${have} at ${leftUs.toFixed(1)} µs`, label: `departure of all-reduce ${k + 1} in ${at}` },
        );
      });
    }
  });
}

/**
 * An all-reduce carries gradients that exist: on every rank, the first
 * values of each all-reduce's first message (a ring's first chunk, this
 * rank's own values before any reduction) must be values of gradients that
 * backward had completed on this rank when the message left, as the check's
 * own hook copied them (or those divided by N, for a trainer that averages
 * before it sums). Counting elements (expectSendsAfterGradients) cannot see
 * which gradients a message carries: all-reduces of the buckets' sizes, sent
 * at their buckets' times, could carry slices of gradients completed later,
 * reached through memory by a stream whose clock is early. The values are
 * compared at a relative 1e-6 (exact for a copy; an ulp or two for a
 * division): the first CARRIED_VALUES of a message, and SAMPLED_VALUES at
 * positions the launcher drew for it at random, so that a message cannot
 * carry the right values only where the check reads (a message of the
 * overlap model holds thousands).
 */
export function expectCarriedGradients(ctx: CheckContext, run: TrainingRun, model: Model): void {
  const { worldSize, timing } = run;
  if (!timing) throw new Error('BUG: expectCarriedGradients needs a timed run');
  if (worldSize === 1) return;
  const { names } = model;
  const near = (sorted: Float32Array, x: number) => {
    const lo = firstAtLeast(sorted, x);
    const tol = Math.abs(x) * 1e-6 + 1e-30;
    return (lo < sorted.length && Math.abs(sorted[lo]! - x) <= tol) || (lo > 0 && Math.abs(sorted[lo - 1]! - x) <= tol);
  };
  model.calls.forEach((calls, s) => {
    const at = `step ${s + 1} with ${ranksWord(worldSize)}`;
    for (let rank = 0; rank < worldSize; rank++) {
      const { ready, gradValues } = timing[rank]!;
      const sorted = gradValues[s]!.map((t) => t.data() as Float32Array);
      calls.forEach((call, k) => {
        const values = call.firstValues[rank];
        const leftUs = call.leftUs[rank]!;
        if (!values || !Number.isFinite(leftUs)) return;
        const complete = names.map((_, i) => i).filter((i) => ready[s]![i]! >= 0 && ready[s]![i]! <= leftUs + 1e-3);
        const stray = values.find(({ value: v }) => !complete.some((i) => near(sorted[i]!, v) || near(sorted[i]!, v * worldSize)));
        if (!stray) return;
        const from = names.map((_, i) => i).find((i) => near(sorted[i]!, stray.value) || near(sorted[i]!, stray.value * worldSize));
        const whose = from === undefined ? 'of no gradient of this rank' : `of ${names[from]}'s gradient, which backward completed at ${us(ready[s]![from]!)}`;
        ctx.fail(
          `rank ${rank}: in ${at}, all-reduce ${k + 1}'s first message left at ${us(leftUs)} of virtual time carrying the value ${stray.value} (its element ${stray.index}), ${whose}: a message cannot carry a gradient that does not exist yet. All-reduce each bucket's own gradients once they are complete, from their hooks`,
          { rank, index: k, expected: `values of gradients complete by ${leftUs.toFixed(1)} µs`, actual: `${stray.value} (${from === undefined ? 'unknown' : names[from]})`, label: `values of all-reduce ${k + 1}'s first message in ${at}` },
        );
      });
    }
  });
}

/**
 * The gradients come from backward on the main stream: in every step, on
 * every rank, each parameter's gradient is complete no sooner after the
 * check called loss.backward() than it was in the check's own forward and
 * backward of the same model on a batch of the same shape, before the model
 * was wrapped (programs.ts): the same ops, whose virtual times depend on the
 * shapes alone. A submission's hooks may only add to that. Gradients
 * computed elsewhere (on a background stream, outside the tensor library)
 * and handed to backward at once would be complete at its start, their
 * buckets' all-reduces hidden behind compute that only pads the main
 * stream. Margin: one part in a million, and a thousandth of a µs.
 *
 * (A background stream held on a promise until backward has ended needs no
 * rule here: the runtime's clock carries the release to the stream it
 * releases; runtime README, "the clock follows waits". One that finds its
 * gradients through memory is expectSendsAfterGradients'.)
 */
export function expectGradientsFromBackward(ctx: CheckContext, run: TrainingRun, model: Model): void {
  const { worldSize, timing } = run;
  if (!timing) throw new Error('BUG: expectGradientsFromBackward needs a timed run');
  const { names } = model;
  timing.forEach(({ ready, backwardAt, referenceAfter }, rank) => {
    if (referenceAfter.some((t) => !(t >= 0))) throw new Error(`BUG: rank ${rank}: the check's own backward did not complete every gradient`);
    ready.forEach((times, s) => {
      const at = `step ${s + 1} with ${ranksWord(worldSize)}`;
      times.forEach((t, i) => {
        if (t < 0) {
          ctx.fail(`rank ${rank}: in ${at}, backward never completed the gradient of ${names[i]}: run forward and backward of the wrapped model on the main stream, loss.backward() once a step`, {
            rank, index: i, expected: 'a gradient from backward', actual: 'none', label: `gradient of ${names[i]} in ${at}`,
          });
        }
        const after = t - backwardAt[s]!;
        const need = referenceAfter[i]!;
        if (after >= need * (1 - 1e-6) - 1e-3) return;
        ctx.fail(
          `rank ${rank}: in ${at}, the gradient of ${names[i]} was complete ${us(after)} after loss.backward() began, but backward of this model computes it ${us(need)} in (the check's own pass, same shapes): it came from somewhere other than backward on the main stream. Let backward compute the gradients where the step's time shows; start each bucket's all-reduce from their hooks`,
          { rank, index: i, expected: `>= ${need.toFixed(1)} µs after backward began`, actual: `${after.toFixed(1)} µs`, label: `completion of ${names[i]}'s gradient in ${at}` },
        );
      });
    });
  });
}

/**
 * A background stream's clock moves only with its own work and with what it
 * waits for (a message, a promise another stream settled): on every rank it
 * may not `comm.elapse`, and all of a step's background streams together may
 * compute at most BACKGROUND_COMPUTE_SHARE of one forward and backward
 * (`refComputeUs`). Copying buckets in and out and dividing them take a few
 * percent of it (the reference solution: 1%). Without this, a stream started
 * at the first hook could wait for the end of backward through memory, then
 * send every bucket with its clock padded to the bucket's time, by elapse or
 * by useless ops: all-reduces that start only after backward, timed as if
 * they overlapped it.
 */
export function expectBackgroundStreamsWork(ctx: CheckContext, run: TrainingRun, d: RankDeviceStats, refComputeUs: number): void {
  const background = d.streams.filter((s) => s.id !== 0);
  const at = `with ${ranksWord(run.worldSize)}`;
  const elapsed = background.reduce((a, s) => a + s.elapsedUs, 0);
  if (elapsed > 0) {
    ctx.fail(
      `rank ${d.rank}: ${at}, background streams moved their clocks by ${us(elapsed)} with comm.elapse: a stream started for a bucket's all-reduce has nothing to wait for but its gradients and its messages, which move its clock themselves. Start each bucket's all-reduce from the hook that completes the bucket, and let it wait only for its messages`,
      { rank: d.rank, index: null, expected: '0 µs of comm.elapse on background streams', actual: `${elapsed.toFixed(1)} µs`, label: `comm.elapse on background streams ${at}` },
    );
  }
  const perStep = background.reduce((a, s) => a + s.computeUs, 0) / run.spec.steps;
  const allowed = BACKGROUND_COMPUTE_SHARE * refComputeUs;
  if (perStep > allowed) {
    ctx.fail(
      `rank ${d.rank}: ${at}, background streams computed ${us(perStep)} a step, more than ${Math.round(BACKGROUND_COMPUTE_SHARE * 100)}% of one forward and backward (${us(refComputeUs)}): copying buckets and dividing them takes a few percent. Work on a bucket's stream only for its all-reduce; compute the model's forward and backward on the main stream`,
      { rank: d.rank, index: null, expected: `<= ${allowed.toFixed(1)} µs a step`, actual: `${perStep.toFixed(1)} µs`, label: `background compute a step ${at}` },
    );
  }
}

/** The time a ring all-reduce of `bytes` keeps every link busy: its bandwidth term 2(N-1)/N · S/B, without latencies. */
export function linkTime(bytes: number, worldSize: number): number {
  return ((2 * (worldSize - 1)) / worldSize) * (bytes / COST.bytesPerUs);
}

/**
 * The step's virtual time on every rank must stay within what overlapping
 * the all-reduces with backward gives:
 *
 *     R·1.02 + 10 µs + c_last + link(S - S_last)/2
 *
 * - R is the compute of one forward and backward pass of the same model on
 *   the same rank and batch, measured by the check's own program before the
 *   model is wrapped (2% and 10 µs cover copies into and out of buckets);
 * - c_last is the whole ring all-reduce of the bucket launched last
 *   (estimateTime: 2(N-1)·(α + S_last/(N·B))): it holds the first layer,
 *   whose gradient backward completes last, so nothing is left to hide it;
 * - link(S - S_last) = 2(N-1)/N · (S - S_last)/B is the time the other
 *   buckets keep each link busy. Half of it may show.
 *
 * Buckets that all become ready at the end of backward make the step wait at
 * least link(S) (every byte must still cross each rank's link, one message at
 * a time), which is over the bound by link(S - S_last)/2 - 2(N-1)·α: the
 * overlap model is built so that this is hundreds of µs (BUG otherwise),
 * and so that each layer's backward computes longer than the layer's
 * all-reduce takes, so an overlapped step shows little more than c_last.
 * Bounding the step's time, not only its waits, means that padding a step
 * with extra work (elapse, a useless matmul) to hide the waits makes it
 * slower, not faster.
 *
 * The bound holds only if the step does its forward and backward where its
 * time shows, so the step region's own FLOPs and compute must be at least
 * R's: a region counts the ops of the main stream only (a background
 * stream's ops, and work done outside the tensor library, are in no
 * region), and the step runs the same model on a batch of the same shape
 * as R, whose FLOPs and roofline times depend on the shapes alone; the
 * step adds the buckets' copies and reductions to them. Margin: none on
 * the FLOPs (integers, the same ops); one part in a million on the compute,
 * for the float sums of op times in another order.
 */
export function expectOverlap(ctx: CheckContext, run: TrainingRun, buckets: ExpectedBucket[]): void {
  const { worldSize, result } = run;
  const named = namedUniqueParameters(MLP.build(run.spec, 0));
  const model: Model = { names: named.map(([n]) => n), numels: named.map(([, p]) => p.numel), calls: tracedCalls(ctx, run) };
  expectGradientsFromBackward(ctx, run, model);
  expectSendsAfterGradients(ctx, run, model);
  expectCarriedGradients(ctx, run, model);
  const bytes = buckets.map((b) => b.elements * 4);
  const total = bytes.reduce((a, b) => a + b, 0);
  const cLast = estimateTime('allReduce', 'ring', bytes.at(-1)!, worldSize, COST, { elementBytes: 4 });
  const hideable = linkTime(total - bytes.at(-1)!, worldSize);
  const allowedWait = cLast + hideable / 2;
  if (hideable / 2 - 2 * (worldSize - 1) * COST.alphaUs < 100) throw new Error(`BUG: the overlap model cannot tell overlapped buckets from late ones with ${worldSize} ranks`);
  const labels = regionLabels(ctx.markKey());
  for (const d of result.device!.ranks) {
    const ref = region(ctx, d, labels.reference, 'reference forward-and-backward', 1);
    const step = region(ctx, d, labels.step, 'training step', run.spec.steps);
    expectBackgroundStreamsWork(ctx, run, d, ref.computeUs);
    const bound = ref.computeUs * 1.02 + 10 + allowedWait;
    if (step.flops < ref.flops || step.computeUs < ref.computeUs * (1 - 1e-6)) {
      const what = step.flops < ref.flops ? `${step.flops} FLOPs where one forward and backward of the model on this batch charges ${ref.flops}` : `${us(step.computeUs)} of compute where one forward and backward charges ${us(ref.computeUs)}`;
      ctx.fail(`rank ${d.rank}: a training step with ${ranksWord(worldSize)} ran ${what} on its main stream: run forward and backward on the main stream with the tensor library (not inside comm.background, not by hand), where the overlap check can see the compute the all-reduces must hide behind`, {
        rank: d.rank,
        index: null,
        expected: `>= ${ref.flops} FLOPs and ${ref.computeUs.toFixed(1)} µs of compute`,
        actual: `${step.flops} FLOPs and ${step.computeUs.toFixed(1)} µs`,
        label: `main-stream compute of a training step with ${ranksWord(worldSize)}`,
      });
    }
    const detail = `${us(step.computeUs)} of compute and ${us(step.waitUs)} waiting on communication`;
    if (step.totalUs > bound) {
      ctx.fail(
        `rank ${d.rank}: a training step with ${ranksWord(worldSize)} took ${us(step.totalUs)} of virtual time (${detail}); with the all-reduces overlapping backward it takes at most ${us(bound)}: forward and backward compute ${us(ref.computeUs)} (+2% and 10 µs), plus the last bucket's all-reduce, ${us(cLast)}, plus half of the ${us(hideable)} the other ${buckets.length - 1} buckets keep the link busy. All-reduces that start only once backward has ended wait at least ${us(linkTime(total, worldSize))}. Did the step's all-reduces start while backward was still running?`,
        { rank: d.rank, index: null, expected: `<= ${bound.toFixed(1)} µs`, actual: `${step.totalUs.toFixed(1)} µs`, label: `virtual time of a training step with ${ranksWord(worldSize)}` },
      );
    }
    if (d.rank === 0) ctx.note(`${ranksWord(worldSize)}, ${buckets.length} buckets: a step took ${us(step.totalUs)} (${detail}), allowed ${us(bound)}; all-reduces started after backward would wait at least ${us(linkTime(total, worldSize))}`);
  }
}

/** The public MLP with every bucket size of the bucket-count check. */
const evenSpec = (seed: number, steps: number, layers: number): BucketSpec => ({ seed, sizes: EVEN_SIZES, batchPerRank: 4, steps, lr: 0.5, bucketBytes: layers * LAYER_BYTES });

/**
 * The model of the overlap checks: eight layers whose widths shrink towards
 * the output (192 to 112), 32 examples per rank, and bucketBytes the smallest
 * layer's gradient bytes, so that each layer is one bucket of the README's
 * rule. The layers' gradients shrink towards the output too (33,968 to
 * 13,552 elements), so buckets filled from the other end, or sent before
 * their gradients were complete, carry more than backward has completed
 * when they leave (expectSendsAfterGradients). On the course device a
 * layer's backward computes longer than its ring all-reduce takes on 2 or
 * 4 ranks (the last layer: about 170 µs against 63 and 125).
 */
export const OVERLAP_WIDTHS = [192, 176, 160, 152, 144, 136, 128, 120, 112];
export const overlapSpec = (seed: number): BucketSpec => ({ seed, sizes: OVERLAP_WIDTHS, batchPerRank: 32, steps: 2, lr: 0.05, bucketBytes: (120 * 112 + 112) * 4 });

export const checks: Record<string, CheckFn> = {
  parity: async (ctx) => {
    const spec = evenSpec(ctx.seedFor('parity'), 3, 2);
    expectParity(ctx, await runTraining(ctx, 2, spec));
    ctx.note(`2 ranks, 3 buckets, 3 SGD steps: every parameter matches one process on the combined batch, bit for bit the same on both ranks`);
  },
  'bucket-count': async (ctx) => {
    for (const layers of [5, 3, 2]) {
      const run = await runTraining(ctx, 2, evenSpec(ctx.seedFor('buckets', layers), 1, layers));
      expectParity(ctx, run);
      const buckets = expectBucketCalls(ctx, run);
      ctx.note(`bucketBytes ${run.spec.bucketBytes} (${layers} layers of ${LAYER_BYTES} bytes): ${buckets.length} all-reduce${buckets.length === 1 ? '' : 's'} of ${buckets.map((b) => b.elements).join(', ')} elements`);
    }
  },
  overlap: async (ctx) => {
    const run = await runTraining(ctx, 2, overlapSpec(ctx.seedFor('overlap')), MLP, true);
    expectParity(ctx, run);
    expectOverlap(ctx, run, expectedBuckets(buildMlp(run.spec, 0), run.spec.bucketBytes));
  },
};
