/**
 * Public checks of ex13-profile-before-scaling, and what the hidden checks
 * share with them.
 *
 * For a job drawn from the grading seed, the checker first measures one
 * worker itself, with its own rank program (no submission code): the input
 * and device time of a step after warm-up, and a steady training loop's step.
 * From those and the all-reduce's closed form it computes the speedup curve
 * and draws targets whose answer is clear of its boundary (plan.ts, data.ts).
 * Then the submission profiles one worker and plans for each target, and the
 * checker runs the job on the rank count each plan chose, again with its own
 * program, to measure the speedup the plan predicted.
 *
 * Tolerances: the device is deterministic and the job's step follows the
 * reference model exactly, so a right profile matches the device's figures
 * to rounding; 2% for profile figures and 3% for predictions leave room for
 * other sound ways to measure (an average over steady steps, the
 * all-reduce without the whole-element rounding), and none for the
 * mistakes: a warm-up step in the average adds 20% or more, an unsynchronised
 * timer misses the whole device step, linear extrapolation is off by the
 * all-reduce.
 */
import type { LaunchResult } from '@dtlab/runtime';
import { DEFAULT_COST, formatUs } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { JOB_DEVICE, parameterCount, type JobSpec } from './job.ts';
import { epochSteps, predictCurve, type JobFacts, type Prediction, type ScalingTarget, type WorkerParts } from './plan.ts';
import { makeJob, makeTarget, type Bottleneck, type JobVariant } from './data.ts';
import type { Measured, OneWorker, PlanningResult } from './programs.ts';

const ENTRY = 'src/profile-before-scaling.ts';
const PROGRAMS = programPath(import.meta.url, './programs.ts');

/** Relative tolerance of the profile's figures against the device's. */
export const PROFILE_RTOL = 0.02;
/** Relative tolerance of a plan's predicted speedup and epoch time against the device's, measured with the chosen ranks. */
export const PLAN_RTOL = 0.03;
/**
 * The memory baseline. The profile's peak must be the device's figure for the
 * profiling launch itself (up to this fraction below it: what the launch
 * allocated before the profile began), and at least MEMORY_FLOOR of the
 * device's peak for one worker training the job, measured by the checker.
 * The two launches allocate in different orders, so their peaks (upper
 * bounds between collections, see the runtime README) differ by up to about
 * 15%; a peak read before the device has run a step, or of the parameters
 * alone, is a small fraction of either.
 */
export const MEMORY_RTOL = 0.1;
/** The least fraction of the checker's one-worker peak a profile's peak may be. */
export const MEMORY_FLOOR = 0.75;

/** The job's facts, as the reference model reads them: its network is the one the job's all-reduce runs on (job.ts, extraRingUs). */
export function factsOf(spec: JobSpec): JobFacts {
  return { batchPerRank: spec.batchPerRank, epochExamples: spec.epochExamples, gradientBytes: 4 * parameterCount(spec.sizes), network: { ...(spec.network ?? DEFAULT_COST) }, maxRanks: spec.maxRanks };
}

/** The checker's measurement of one worker: the parts of a step after warm-up, and a steady loop's step. */
export interface Reference {
  parts: WorkerParts;
  stepUs: number;
  /** The device's memory peak of the measurement: one worker training the job. */
  peakBytes: number;
  curve: Prediction[];
}

/** The steady step of a measureJob run: the time between the last two launches. */
function steadyStep(m: Measured): number {
  return m.launchUs.at(-1)! - m.launchUs.at(-2)!;
}

/**
 * Steps a loop measurement runs: launch k + 1 waits for step k's device work,
 * which is past the warm-up from k = warmupSteps on, so the last two launches
 * of warmupSteps + 2 steps are a steady step apart.
 */
function measuredSteps(spec: JobSpec): number {
  return spec.warmupSteps + 2;
}

/** What one run of the checker's own program handed back (its own code: a failure here is the checker's). */
function valueOf<T>(result: LaunchResult, rank = 0): T {
  const v = result.ranks[rank]?.value;
  if (v === undefined) throw new Error(`BUG: the checker's rank program returned nothing on rank ${rank}`);
  return v as T;
}

/** Measures one worker with the checker's own programs. */
export async function measureReference(ctx: CheckContext, spec: JobSpec): Promise<Reference> {
  // Step warmupSteps is the first without warm-up, and past the first batch's extra input.
  const r = await ctx.run({ worldSize: 1, program: { module: PROGRAMS, export: 'measureOneWorker' }, args: [spec, spec.warmupSteps + 1], device: JOB_DEVICE, openClock: true });
  const one = valueOf<OneWorker>(r);
  const p = { inputUs: one.inputUs.at(-1)!, computeUs: one.deviceUs.at(-1)! };
  return { parts: p, stepUs: steadyStep(one.loop), peakBytes: r.device?.ranks[0]?.memory.peakBytes ?? 0, curve: predictCurve(factsOf(spec), p) };
}

/** The steady step of the job on `ranks` ranks, measured on the device by the checker's own program (rank 0; every rank is the same). */
export async function measureStep(ctx: CheckContext, spec: JobSpec, ranks: number, ref: Reference): Promise<number> {
  if (ranks === 1) return ref.stepUs;
  return ctx.shared(`ex13 step ${spec.name} ${spec.seed} ${ranks}`, async () => {
    const r = await ctx.run({ worldSize: ranks, program: { module: PROGRAMS, export: 'measureJob' }, args: [spec, measuredSteps(spec)], device: JOB_DEVICE, openClock: true });
    return steadyStep(valueOf<Measured>(r));
  });
}

/** One job's planning: the job, the checker's reference, the targets, and what the submission's profile and plans were. */
export interface Planning {
  kind: Bottleneck;
  spec: JobSpec;
  ref: Reference;
  targets: { target: ScalingTarget; ranks: number }[];
  result: PlanningResult;
  /** The device's memory peak of the submission's profiling launch. */
  devicePeakBytes: number;
}

/** The job of `kind` (a public or a hidden one, see makeJob), its reference and targets, and the submission's profile and plans: once per grading for each kind (the checks of one job share it). */
export function planning(ctx: CheckContext, kind: Bottleneck, maxRanks: number, variant: JobVariant = 'public'): Promise<Planning> {
  return ctx.shared(`ex13 planning ${kind} ${maxRanks} ${variant}`, async () => {
    const spec = makeJob(kind, ctx.seedFor('job', kind), maxRanks, variant);
    const ref = await measureReference(ctx, spec);
    const targets = [makeTarget(ref.curve, ctx.seedFor('target', kind, 0), 'epoch-time'), makeTarget(ref.curve, ctx.seedFor('target', kind, 1), 'efficiency')];
    if (targets[0]!.target.kind === targets[1]!.target.kind) targets.pop();
    const r = await ctx.run({ worldSize: 1, program: { module: PROGRAMS, export: 'planOnOneWorker' }, args: [ctx.entry(ENTRY), spec, targets.map((t) => t.target)], device: JOB_DEVICE, openClock: true, freshWorkers: true });
    const result = r.ranks[0]!.value as PlanningResult;
    return { kind, spec, ref, targets, result, devicePeakBytes: r.device?.ranks[0]?.memory.peakBytes ?? 0 };
  });
}

/** A finite number field of an untrusted object, or a failure that names it. */
function numberField(ctx: CheckContext, obj: unknown, field: string, what: string): number {
  const v = obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[field] : undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    ctx.fail(`${what}.${field} must be a finite number, got ${v === undefined ? 'nothing' : typeof v === 'number' ? String(v) : typeof v}`, { rank: 0, index: null, expected: 'a finite number', actual: String(v), label: `${what}.${field}` });
  }
  return v;
}

/** Fails unless `actual` is within `rtol` of `expected`, with a message that says what the figure is and how far off. */
function expectWithin(ctx: CheckContext, actual: number, expected: number, rtol: number, label: string, advice: string): void {
  if (Math.abs(actual - expected) <= rtol * Math.abs(expected)) return;
  const off = expected === 0 ? 'n/a' : `${(((actual - expected) / expected) * 100).toFixed(1)}%`;
  ctx.fail(`${label}: expected ${expected.toPrecision(6)} (within ${rtol * 100}%), got ${actual.toPrecision(6)} (${off}). ${advice}`, { rank: 0, index: null, expected, actual, label });
}

/**
 * The profile against the checker's measurement of the same job on the same
 * device: input and compute per step after warm-up, the steady step and the
 * throughput it gives, and the memory peak against the device's figure of
 * the profiling launch.
 */
export function expectBaseline(ctx: CheckContext, p: Planning): void {
  const prof = p.result?.profile;
  const what = `profile of the ${p.spec.name} job`;
  const inputUs = numberField(ctx, prof, 'inputUs', 'profile');
  const computeUs = numberField(ctx, prof, 'computeUs', 'profile');
  const stepUs = numberField(ctx, prof, 'stepUs', 'profile');
  const eps = numberField(ctx, prof, 'examplesPerSecond', 'profile');
  const peak = numberField(ctx, prof, 'peakBytes', 'profile');
  const warm = `Is a warm-up step in it? The job's first steps are slower (${p.spec.warmupSteps} of them here).`;
  expectWithin(ctx, inputUs, p.ref.parts.inputUs, PROFILE_RTOL, `${what}: input pipeline per step, µs`, warm);
  expectWithin(ctx, computeUs, p.ref.parts.computeUs, PROFILE_RTOL, `${what}: device time per step, µs`, `${warm} And a timer read before the device has finished (launchStep returns when the work is queued) sees none of it.`);
  expectWithin(ctx, stepUs, p.ref.stepUs, PROFILE_RTOL, `${what}: steady step of a training loop, µs`, 'In a training loop the next batch loads while the device runs the step before: what does a step take then?');
  expectWithin(ctx, eps, (p.spec.batchPerRank * 1e6) / p.ref.stepUs, PROFILE_RTOL, `${what}: throughput, examples per second`, 'One worker processes batchPerRank examples per steady step.');
  const own = p.devicePeakBytes;
  const ref = p.ref.peakBytes;
  if (!(peak <= own + 1024 && peak >= (1 - MEMORY_RTOL) * own && peak >= MEMORY_FLOOR * ref)) {
    ctx.fail(
      `${what}: memory peak ${peak} B, but the device's peak for your profiling launch was ${own} B (the profile's may be up to ${MEMORY_RTOL * 100}% below it, never above), and one worker training this job peaks at ${ref} B (the profile's must be at least ${MEMORY_FLOOR * 100}% of it). Read the device's own figure once the device has run the steps: a memory mark's peakBytes covers every buffer allocated since the mark before, wherever the job keeps it.`,
      { rank: 0, index: null, expected: own, actual: peak, label: `${what}: memory peak, bytes` },
    );
  }
  ctx.note(`${p.spec.name}: input ${formatUs(inputUs)}, device ${formatUs(computeUs)}, step ${formatUs(stepUs)} per step after ${p.spec.warmupSteps} warm-up steps; memory peak ${peak} B (the device: ${own} B for this launch, ${ref} B for the checker's)`);
}

/**
 * Each plan against the checker's choice for its target, and its predicted
 * speedup and epoch time against the device's, measured with the ranks the
 * plan chose (against one worker's epoch, both measured by the checker).
 */
export async function expectPlans(ctx: CheckContext, p: Planning): Promise<void> {
  const plans = Array.isArray(p.result?.plans) ? p.result.plans : [];
  const oneStep = p.ref.stepUs;
  const facts = factsOf(p.spec);
  for (const [i, { target, ranks: want }] of p.targets.entries()) {
    const plan = plans[i];
    const what = `${p.spec.name}, target ${describeTarget(target)}`;
    const ranks = numberField(ctx, plan, 'ranks', 'plan');
    const speedup = numberField(ctx, plan, 'predictedSpeedup', 'plan');
    const epochUs = numberField(ctx, plan, 'predictedEpochUs', 'plan');
    if (!Number.isInteger(ranks) || ranks < 1 || ranks > p.spec.maxRanks) {
      ctx.fail(`${what}: plan.ranks must be an integer from 1 to the job's maxRanks ${p.spec.maxRanks}, got ${ranks}`, { rank: 0, index: null, expected: `1..${p.spec.maxRanks}`, actual: ranks, label: `${what}: ranks` });
    }
    const step = await measureStep(ctx, p.spec, ranks, p.ref);
    const measuredEpoch = epochSteps(facts, ranks) * step;
    const measuredSpeedup = (epochSteps(facts, 1) * oneStep) / measuredEpoch;
    if (ranks !== want) {
      const right = p.ref.curve[want - 1]!;
      ctx.fail(
        `${what}: chose ${ranks} ranks, where the device measures a speedup of ${measuredSpeedup.toFixed(2)} (the plan predicted ${speedup.toFixed(2)}) and an epoch of ${formatUs(measuredEpoch)}; from one worker's steady figures the target asks for ${want} ranks (speedup ${right.speedup.toFixed(2)}, epoch ${formatUs(right.epochUs)}, efficiency ${right.efficiency.toFixed(2)}). Compare your profile's figures with the device's, and what a step costs on N ranks besides one worker's step.`,
        { rank: 0, index: null, expected: want, actual: ranks, label: `${what}: ranks` },
      );
    }
    expectWithin(ctx, speedup, measuredSpeedup, PLAN_RTOL, `${what}: predicted speedup with ${ranks} ranks (measured on the device)`, 'The plan chose the right count; what does the speedup leave out?');
    expectWithin(ctx, epochUs, measuredEpoch, PLAN_RTOL, `${what}: predicted epoch time with ${ranks} ranks, µs (measured on the device)`, `An epoch on N ranks is ⌈epochExamples / (N · batchPerRank)⌉ steady steps.`);
    ctx.note(`${describeTarget(target)}: ${ranks} ranks, predicted speedup ${speedup.toFixed(2)}, measured ${measuredSpeedup.toFixed(2)}`);
  }
}

/** A target as a student reads it. */
export function describeTarget(t: ScalingTarget): string {
  return t.kind === 'epoch-time' ? `epoch within ${formatUs(t.maxEpochUs)}` : `efficiency at least ${t.minEfficiency}`;
}

/** The most ranks of the public checks' job (the hidden jobs have 6). */
export const PUBLIC_MAX_RANKS = 4;

export const checks: Record<string, CheckFn> = {
  baseline: async (ctx) => {
    expectBaseline(ctx, await planning(ctx, 'compute', PUBLIC_MAX_RANKS));
  },
  'plan-compute-bound': async (ctx) => {
    await expectPlans(ctx, await planning(ctx, 'compute', PUBLIC_MAX_RANKS));
  },
};

