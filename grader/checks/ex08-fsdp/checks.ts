/**
 * Public checks of ex08-fsdp. Each wraps every Linear of the seeded MLP of
 * data.ts in the submission's FsdpLinear on N rank workers, trains it with
 * AdamW over the shards, every rank on its own mini-batches, and compares
 * each rank's shards (after each step) and their gradients (before it) with
 * the same elements of single-process AdamW on the combined batch, computed
 * here. The memory check runs the same training on the virtual device and
 * reads, from the marks its own rank program made with the check's key,
 * what the gathered parameters took in the forward and the backward pass.
 */
import { chunkBounds, unflattenTensors, type Tensor } from '@dtlab/tensor';
import type { LaunchResult, MemoryMark, RankStats, TraceEvent } from '@dtlab/runtime';
import { programPath, fenceTags, firstAtLeast, splitPhases, type CheckContext, type CheckFn, type ValueShape } from '@dtlab/grader';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS, paramCount, rankShards, shardSizes, singleProcessTraining, unitsOf, type Experiment } from './data.ts';
import { FENCES, MARKS, type FsdpResult, type Measure } from './programs.ts';

const ENTRY = 'src/fsdp-linear.ts';
const training = { module: programPath(import.meta.url, './programs.ts'), export: 'fsdpTraining' };

/**
 * The MLP of the checks: 13-40-41-43-37-44-11, six Linear units of 560,
 * 1681, 1806, 1628, 1672 and 495 parameters (P = 7842), sizes that 2 to 5
 * ranks mostly do not divide, so the shards are uneven; the largest unit is
 * under a quarter of the model, so a rank that keeps every gathered layer
 * stands out against one that keeps a layer or two.
 */
export const SIZES = [13, 40, 41, 43, 37, 44, 11];

/**
 * Float32 parity over a few steps: the two runs add the same numbers in a
 * different order (per-rank means then an average across ranks, against one
 * mean over the combined batch), so only rounding may differ; eps = 1e-3
 * keeps Adam's g/(|g| + eps) from turning the rounding of a near-zero
 * gradient into a visible step.
 */
export const TOLERANCE = { rtol: 1e-4, atol: 1e-5 };

/** What the training program hands back (see FsdpResult). */
export const RESULT: ValueShape = { object: { params: { array: 'tensor' }, grads: { array: 'tensor' }, before: { array: 'tensor' }, gradProblems: { array: 'string' } } };
/** Values a measured run keeps of each message, at positions the launcher draws (expectGatherInBackward). */
export const SAMPLED_VALUES = 16;

/** The experiment of a check: its seed comes from the grading seed, the check and `keys`. */
export function experiment(ctx: CheckContext, over: Partial<Experiment>, ...keys: (string | number)[]): Experiment {
  return { seed: ctx.seedFor('experiment', ...keys), sizes: SIZES, batchPerRank: 4, steps: 3, opts: CHECK_OPTIONS, ...over };
}

/** One training launch: what every rank returned, its traffic, and the device's report when it ran on one. */
export interface TrainingRun {
  e: Experiment;
  outputs: FsdpResult[];
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
    returns: RESULT,
    ...(measure ? { device: 'course' as const, markKey: measure.key, freshWorkers: true, traceSample: SAMPLED_VALUES } : {}),
  });
  return { e, outputs: r.ranks.map((o) => o.value as FsdpResult), stats: r.stats, trace: r.trace, device: r.device };
}

/** Per unit, views of a rank's shards laid end to end, and their names for messages. */
function byUnit(e: Experiment, flat: Tensor, worldSize: number, rank: number): Tensor[] {
  return unflattenTensors(flat, shardSizes(e, worldSize, rank).map((n) => [n]));
}

/** Where element `i` of rank `rank`'s shard of unit k sits in the layer: `4.weight[3, 5]` or `4.bias[2]`. */
export function elementName(e: Experiment, k: number, worldSize: number, rank: number, i: number): string {
  const u = unitsOf(e)[k]!;
  const at = chunkBounds(u.n, worldSize)[rank]!.start + i;
  const nw = u.outFeatures * u.inFeatures;
  return at < nw ? `${u.layer}.weight[${Math.floor(at / u.inFeatures)}, ${at % u.inFeatures}]` : `${u.layer}.bias[${at - nw}]`;
}

/**
 * Compares every rank's shards after each step, and their gradients before
 * it, with the same elements of the reference: the first wrong value fails,
 * naming the step, the rank, the layer and the element. `from` is the index
 * of the first step the outputs hold (the memory run keeps only its last).
 */
export function expectShardParity(ctx: CheckContext, run: TrainingRun, worldSize: number, from = 0): void {
  const reference = singleProcessTraining(run.e, worldSize).slice(from);
  const units = unitsOf(run.e);
  const ranks = `${worldSize} rank${worldSize === 1 ? '' : 's'}`;
  reference.forEach((ref, i) => {
    const step = from + i + 1;
    run.outputs.forEach((out, rank) => {
      const problem = out.gradProblems[i];
      if (problem === undefined || out.params[i] === undefined || out.grads[i] === undefined) ctx.fail(`rank ${rank}: no results for step ${step} with ${ranks}`);
      if (problem) ctx.fail(`${problem} (step ${step} with ${ranks}): after backward, each shard's .grad must be the mean gradient of exactly the shard's elements, a 1-D tensor of the shard's size`, { rank, index: null, expected: 'the shard\'s shape', actual: problem.slice(0, 200), label: `shard gradients after the backward of step ${step}` });
      for (const [what, flat, want] of [['gradient', out.grads[i]!, ref.grads], ['parameters', out.params[i]!, ref.params]] as const) {
        const expected = rankShards(run.e, want, worldSize, rank);
        if (flat.numel !== expected.numel) ctx.fail(`rank ${rank}: its shards hold ${flat.numel} elements in all after step ${step} with ${ranks}, where its chunks of the ${units.length} layers hold ${expected.numel}`, { rank, index: null, expected: expected.numel, actual: flat.numel, label: 'shard elements' });
        const got = byUnit(run.e, flat, worldSize, rank);
        byUnit(run.e, expected, worldSize, rank).forEach((w, k) => {
          const label = what === 'gradient'
            ? `the gradient of layer ${units[k]!.layer}'s shard (elements ${chunkBounds(units[k]!.n, worldSize)[rank]!.start}.. of [weight, bias]) after the backward of step ${step} with ${ranks}`
            : `layer ${units[k]!.layer}'s shard (elements ${chunkBounds(units[k]!.n, worldSize)[rank]!.start}.. of [weight, bias]) after step ${step} with ${ranks}`;
          ctx.expectClose(got[k]!, w, { rank, label, ...TOLERANCE });
        });
      }
    });
  });
}

/** Largest unit, in elements. */
function largestUnit(e: Experiment): number {
  return Math.max(...unitsOf(e).map((u) => u.n));
}

/**
 * The bounds on parameter memory, in bytes (elements of float32), from the
 * units' sizes n_k, N and the batch b:
 *
 * - kept after sharding: 4·Σ_k ⌈n_k/N⌉ + 4 KiB: the shards, and no more.
 * - held in the forward, beyond the shards and the activations: 4·(M + ⌈M/N⌉)
 *   + 4 KiB, M the largest unit: one gathered layer (FSDP keeps the last one
 *   for the backward that follows at once) and the chunk the ring
 *   collectives keep for their next call. The activations allowed by layer k
 *   are b·(in_k + 2·out_k) elements: its input, a copy, its output and the
 *   tanh's.
 * - the forward's peak: 4·(2·M + ⌈M/N⌉) + 4 KiB: the layer running and one
 *   being gathered ahead (prefetching).
 * - the backward's peak, beyond what the rank held before it:
 *   4·(Σ_k ⌈n_k/N⌉ + 4·M + ⌈M/N⌉ + 4·b·W) + 4 KiB: the shards' gradients, a
 *   gathered layer with its full gradient, the collectives' working copies,
 *   and the activations' gradients (W the widest layer).
 */
export function parameterBounds(e: Experiment, worldSize: number, rank: number): { kept: number; held: number; peak: number; backward: number; activations: number[] } {
  const shards = shardSizes(e, worldSize, rank).reduce((a, b) => a + b, 0);
  const m = largestUnit(e);
  const chunk = Math.ceil(m / worldSize);
  const units = unitsOf(e);
  const b = e.batchPerRank;
  let acc = 0;
  const activations = units.map((u) => BYTES_PER_ELEMENT * (acc += b * (u.inFeatures + 2 * u.outFeatures)));
  const width = Math.max(...e.sizes);
  return {
    kept: BYTES_PER_ELEMENT * shards + 4096,
    held: BYTES_PER_ELEMENT * (m + chunk) + 4096,
    peak: BYTES_PER_ELEMENT * (2 * m + chunk) + 4096,
    backward: BYTES_PER_ELEMENT * (shards + 4 * m + chunk + 4 * b * width) + 4096,
    activations,
  };
}

/** One rank's figures, in bytes (see expectParameterMemory). */
export interface ParameterMemory {
  rank: number;
  kept: number;
  /** Per layer: bytes in use after its forward beyond what the rank held before the forward, less the activations allowed so far. */
  held: number[];
  /** Per layer: the device's peak during its forward, on the same footing. */
  peak: number[];
  /** The device's peak during the backward, beyond what the rank held before it. */
  backward: number;
}

/** Reads one rank's marks (see MARKS and the bounds). */
export function readParameterMemory(ctx: CheckContext, run: TrainingRun, rank: number): ParameterMemory {
  const all = run.device?.ranks[rank]?.memory.marks.filter((m) => m.trusted) ?? [];
  const find = (label: string): MemoryMark => all.find((m) => m.label === label) ?? ctx.fail(`BUG: rank ${rank}: the memory program's mark '${label}' is missing (marks: ${all.map((m) => m.label).slice(0, 8).join(', ')})`);
  const base = find(MARKS.base);
  const sharded = find(MARKS.sharded);
  const beforeForward = find(MARKS.beforeForward);
  const beforeBackward = find(MARKS.beforeBackward);
  const { activations } = parameterBounds(run.e, run.outputs.length, rank);
  const forward = unitsOf(run.e).map((u) => find(`${MARKS.forward} ${u.layer}`));
  const backwardMarks = all.slice(all.indexOf(beforeBackward) + 1);
  return {
    rank,
    kept: sharded.inUseBytes - base.inUseBytes,
    held: forward.map((m, k) => m.inUseBytes - beforeForward.inUseBytes - activations[k]!),
    peak: forward.map((m, k) => m.peakBytes - beforeForward.inUseBytes - activations[k]!),
    backward: Math.max(0, ...backwardMarks.map((m) => m.peakBytes - beforeBackward.inUseBytes)),
  };
}

/**
 * Checks one measured run: every rank's shards and gradients in its last
 * step (parity), then, per rank, what it kept after sharding, what it held
 * and peaked at in each layer's forward, and its peak in the backward,
 * against parameterBounds. Returns the figures, for notes.
 */
export function expectParameterMemory(ctx: CheckContext, run: TrainingRun, worldSize: number): ParameterMemory[] {
  expectShardParity(ctx, run, worldSize, run.e.steps - 1);
  const units = unitsOf(run.e);
  const p = paramCount(run.e);
  const when = `with ${worldSize} ranks (P = ${p}, layers of ${units.map((u) => u.n).join(', ')} parameters)`;
  return run.outputs.map((_, rank) => {
    const g = readParameterMemory(ctx, run, rank);
    const b = parameterBounds(run.e, worldSize, rank);
    const fail = (message: string, expected: number, actual: number, label: string) => ctx.fail(`rank ${rank}: ${message}`, { rank, index: null, expected: `<= ${expected}`, actual, label });
    if (g.kept > b.kept) fail(`after sharding the model ${when} it kept ${g.kept} bytes, more than its shards need: ${b.kept} bytes (4·Σ⌈n_k/N⌉ + 4 KiB). The full parameters are ${BYTES_PER_ELEMENT * p} bytes: between steps a rank keeps its shards only`, b.kept, g.kept, `bytes rank ${rank} kept after sharding`);
    g.held.forEach((h, k) => {
      if (h > b.held) {
        fail(
          `after the forward of layer ${units[k]!.layer} ${when} it held ${h} bytes beyond its shards and the activations so far (${b.activations[k]} bytes allowed for them), more than one gathered layer: ${b.held} bytes (4·(M + ⌈M/N⌉) + 4 KiB, M = ${largestUnit(run.e)} the largest layer). The gathered parameters of the layers already run are still alive: by the end of the forward that is the whole model, ${BYTES_PER_ELEMENT * p} bytes (pnpm hint ex08)`,
          b.held,
          h,
          `bytes rank ${rank} held after the forward of layer ${units[k]!.layer}`,
        );
      }
    });
    g.peak.forEach((h, k) => {
      if (h > b.peak) fail(`during the forward of layer ${units[k]!.layer} ${when} its memory peaked ${h} bytes beyond its shards and the activations so far, more than two gathered layers: ${b.peak} bytes (4·(2·M + ⌈M/N⌉) + 4 KiB)`, b.peak, h, `peak bytes of rank ${rank} in the forward of layer ${units[k]!.layer}`);
    });
    if (g.backward > b.backward) fail(`during the backward ${when} its memory peaked ${g.backward} bytes above what it held before the backward, more than the shards' gradients, a gathered layer with its gradient and the activations' gradients need: ${b.backward} bytes (4·(Σ⌈n_k/N⌉ + 4·M + ⌈M/N⌉ + 4·b·W) + 4 KiB)`, b.backward, g.backward, `peak bytes of rank ${rank} in the backward`);
    return g;
  });
}

/**
 * The least all ranks together must send each other in a measured step's
 * backward, in bytes (float32): 4·(N-1)·(2·P - M), M the largest unit.
 * Memory alone cannot show that the gathered parameters are dropped after
 * the forward: a submission can keep them in a plain JS array, which the
 * device's meter does not see, and skip the backward's gather. The traffic
 * shows it, since FSDP pays for its memory with that second gather (3·Ψ a
 * step, not the 2·Ψ of ZeRO 1 and 2):
 *
 * - every layer's gradient is reduce-scattered in the backward: (N-1)·n_k
 *   at least for a unit of n_k, since each of the N-1 ranks that do not own
 *   an element must pass its contribution on;
 * - every layer but one is gathered again: (N-1)·n_k at least, since each
 *   rank must receive the n_k - s_r elements it does not hold. One layer
 *   may be kept from its forward (the last one, which the backward needs
 *   first; at most one gathered layer may live, by the held bound), so the
 *   bound leaves out the largest.
 *
 * Self-sends carry nothing to anyone and do not count. The reference sends
 * 4·(N-1)·2·P (it gathers every layer again): a margin of 4·(N-1)·M. Keeping
 * every layer from the forward sends 4·(N-1)·P, short by 4·(N-1)·(P - M):
 * 4·(N-1)·6036 bytes on the checks' model (P = 7842, M = 1806).
 *
 * And bytes alone are not the gather: a submission that kept the layers in a
 * plain array could make them up by all-reducing its gradient instead of
 * reduce-scattering it, or by gathering zeros. So of the backward's bytes,
 * 4·(N-1)·(P - M) at least (`gather`) must be in messages that carry the
 * parameters (gatheredBytes).
 */
export function backwardTrafficBound(e: Experiment, worldSize: number): { bytes: number; gather: number; parts: string } {
  const p = paramCount(e);
  const m = largestUnit(e);
  return { bytes: BYTES_PER_ELEMENT * (worldSize - 1) * (2 * p - m), gather: BYTES_PER_ELEMENT * (worldSize - 1) * (p - m), parts: `P = ${p}, M = ${m} the largest layer, N = ${worldSize}` };
}

/**
 * Checks a measured step's backward traffic against backwardTrafficBound,
 * from the trace cut at the check's secret fences. Returns the bytes sent.
 */
export function expectGatherInBackward(ctx: CheckContext, run: TrainingRun, worldSize: number, measure: Measure): number {
  const phases = splitPhases(run.trace, worldSize, measure.fences);
  const when = `step ${measure.step + 1} with ${worldSize} ranks`;
  if (typeof phases === 'string') {
    ctx.fail(`${when}: the check's markers around the backward pass did not come through as sent: ${phases}. Send and receive through the Comm as it is, without changing its methods`, { rank: null, index: null, expected: 'the check\'s fences, in order', actual: phases, label: 'fences around the backward' });
  }
  // Phase 1 is what a rank sent between fence 0 (before the backward) and fence 1 (after it).
  const inBackward = phases.map((r) => r.toOthers[FENCES.afterBackward]!);
  const sent = inBackward.reduce((a, x) => a + x, 0);
  const bound = backwardTrafficBound(run.e, worldSize);
  const gathered = gatheredBytes(run, phases.flatMap((r) => r.events[FENCES.afterBackward]!.filter((e) => e.src !== e.dst)));
  if (sent < bound.bytes) {
    ctx.fail(
      `in the backward pass of ${when} the ranks sent each other ${sent} bytes (${inBackward.map((x, rank) => `rank ${rank} ${x}`).join(', ')}), less than reduce-scattering every layer's gradient and gathering every layer but one again need: 4·(N-1)·(2·P - M) = ${bound.bytes} bytes (${bound.parts}). The layers' parameters were kept from the forward to the backward, wherever they were kept: by the end of the forward each rank held the whole model. Drop each layer's gathered parameters after its forward and gather them again for its backward (pnpm hint ex08)`,
      { rank: null, index: null, expected: `>= ${bound.bytes}`, actual: sent, label: `bytes sent during the backward of ${when}` },
    );
  }
  if (gathered < bound.gather) {
    ctx.fail(
      `in the backward pass of ${when} the ranks sent each other ${sent} bytes, but only ${gathered} of them in messages that carried the layers' parameters (the values of the shards before this step, read at places drawn at random in each message), less than gathering every layer but one again needs: 4·(N-1)·(P - M) = ${bound.gather} bytes (${bound.parts}). Bytes of other kinds (a gradient all-reduced instead of reduce-scattered, zeros) do not stand for the gather: the layers' parameters were kept from the forward to the backward, wherever they were kept. Drop each layer's gathered parameters after its forward and all-gather its shards again for its backward (pnpm hint ex08)`,
      { rank: null, index: null, expected: `>= ${bound.gather} bytes of parameters`, actual: `${gathered} bytes`, label: `parameter bytes gathered during the backward of ${when}` },
    );
  }
  return sent;
}

/**
 * Bytes of `messages` that carried parameters: every value the trace kept of
 * a message (its sample, at positions the launcher drew) is zero or a value
 * of some rank's shards before the measured step (their union is the full
 * model), and one at least is not zero, so that a message of zeros stands for
 * nothing (zeros beside parameters are padding, as in a gather done by
 * all-reducing zero-padded layers). Gradients and their partial sums are not
 * parameters.
 */
function gatheredBytes(run: TrainingRun, messages: readonly TraceEvent[]): number {
  const values = new Float32Array(run.outputs.reduce((a, o) => a + (o.before[0]?.numel ?? 0), 0));
  let at = 0;
  for (const o of run.outputs) {
    const b = o.before[0];
    if (!b) throw new Error('BUG: a measured run returned no shards from before its measured step');
    values.set(b.data() as Float32Array, at);
    at += b.numel;
  }
  values.sort();
  const isParameter = (x: number) => Math.fround(x) === x && values[firstAtLeast(values, x)] === x;
  return messages.filter((e) => e.sample && e.sample.some((v) => v.value !== 0) && e.sample.every((v) => v.value === 0 || isParameter(v.value))).reduce((a, e) => a + e.bytes, 0);
}

/** A note with the figures of a memory run. */
export function memoryNote(figures: ParameterMemory[], e: Experiment, worldSize: number): string {
  const m = largestUnit(e);
  const kept = Math.max(...figures.map((f) => f.kept));
  const peak = Math.max(...figures.flatMap((f) => f.peak));
  const held = Math.max(...figures.flatMap((f) => f.held));
  const backward = Math.max(...figures.map((f) => f.backward));
  return `N = ${worldSize}: shards ${kept} bytes; in the forward, beyond them and the activations, at most ${Math.max(0, held)} bytes held and ${Math.max(0, peak)} at the peak (${(Math.max(0, peak) / (BYTES_PER_ELEMENT * m)).toFixed(2)} of the largest layer, ${BYTES_PER_ELEMENT * m} bytes); backward peak ${backward}; the full parameters are ${BYTES_PER_ELEMENT * paramCount(e)} bytes`;
}

export const checks: Record<string, CheckFn> = {
  'two-ranks': async (ctx) => {
    const e = experiment(ctx, { steps: 2 }, 2);
    expectShardParity(ctx, await runTraining(ctx, e, 2), 2);
  },
  'three-ranks': async (ctx) => {
    const e = experiment(ctx, { steps: 3 }, 3);
    expectShardParity(ctx, await runTraining(ctx, e, 3), 3);
    ctx.note(`layers of ${unitsOf(e).map((u) => u.n).join(', ')} parameters, sharded ${unitsOf(e).map((u) => chunkBounds(u.n, 3).map((b) => b.end - b.start).join('/')).join(', ')}: 3 steps, every shard and its gradient match single-process AdamW on every rank`);
  },
  'parameter-memory': async (ctx) => {
    const worldSize = 4;
    const e = experiment(ctx, { steps: 2 }, worldSize);
    const measure = measureFor(ctx, e, 1);
    const run = await runTraining(ctx, e, worldSize, measure);
    const figures = expectParameterMemory(ctx, run, worldSize);
    const sent = expectGatherInBackward(ctx, run, worldSize, measure);
    ctx.note(`${memoryNote(figures, e, worldSize)}; backward sent ${sent} bytes (at least ${backwardTrafficBound(e, worldSize).bytes})`);
  },
};
