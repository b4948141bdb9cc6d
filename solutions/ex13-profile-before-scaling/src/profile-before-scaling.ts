/**
 * Exercise 13: Profile one worker before adding more.
 *
 * Measure one worker of a training job on the virtual device, then choose how
 * many data-parallel ranks to use for a target, with the speedup they will
 * give. See README.md. (Reference solution.)
 *
 * A worker's first steps are slower than the rest (kernels compile, the
 * allocator grows), and the device runs a step after launchStep has
 * returned: so the profile synchronises before it reads the clock, and
 * measures steps until two in a row agree. The plan then adds what one
 * worker cannot show, the gradient's all-reduce on N ranks, and keeps what
 * overlap hides: the next batch loads while the device runs the step.
 */
import { memory, type Comm, type CostModel } from '@dtlab/runtime';

/** A batch as the job hands it out; give it back to `launchStep` unchanged. */
export type Batch = object;

/**
 * A data-parallel training job on one rank, as the checks and the tests hand
 * it to you. Each step loads a batch on the host (the input pipeline), then
 * runs forward, backward, the gradient's all-reduce over the ranks and the
 * optimizer's update on the device.
 */
export interface TrainingJob {
  readonly name: string;
  /** Examples each rank processes per step. */
  readonly batchPerRank: number;
  /** Examples in one epoch: an epoch on N ranks is ⌈epochExamples / (N · batchPerRank)⌉ steps. */
  readonly epochExamples: number;
  /** Bytes of the gradient each step all-reduces over the ranks (ring, float32). */
  readonly gradientBytes: number;
  /** The model's FLOPs per step by the 6 · parameters · examples rule. */
  readonly nominalFlopsPerStep: number;
  /** The network between ranks: α (alphaUs) per message, β (bytesPerUs). */
  readonly network: CostModel;
  /** The most data-parallel ranks available. */
  readonly maxRanks: number;
  /** Runs the host's input pipeline for this rank's next batch; resolves when it is ready. */
  loadBatch(comm: Comm): Promise<Batch>;
  /**
   * Queues the step of `batch` on the device and resolves as soon as it is
   * queued, before the device has run it (as CUDA kernel launches return).
   * Waits first for the step queued before, if the device is still on it.
   */
  launchStep(comm: Comm, batch: Batch): Promise<void>;
  /** Waits until the device has finished every step queued so far (torch.cuda.synchronize). */
  synchronize(comm: Comm): Promise<void>;
  /** One step as a training loop runs it: loadBatch, then launchStep. Resolves before the device has finished. */
  step(comm: Comm): Promise<void>;
}

/** One worker's figures after warm-up, per step. */
export interface WorkerProfile {
  /** Host time of the input pipeline per step, µs. */
  inputUs: number;
  /** Device time per step on one worker (forward, backward, update), µs. */
  computeUs: number;
  /** A step of a steady training loop (`step` after `step`) on one worker, µs. */
  stepUs: number;
  /** Examples one worker trains on per second in that loop. */
  examplesPerSecond: number;
  /** The device's memory peak while the job trains, bytes. */
  peakBytes: number;
}

/** What a plan is for: the fewest ranks whose epoch fits in a time, or the most ranks that keep a scaling efficiency. */
export type ScalingTarget = { kind: 'epoch-time'; maxEpochUs: number } | { kind: 'efficiency'; minEfficiency: number };

/** How many ranks to use, and what they are predicted to give. */
export interface ScalingPlan {
  /** Data-parallel ranks, 1 to the job's maxRanks. */
  ranks: number;
  /** Epoch time on one rank over epoch time on `ranks` ranks. */
  predictedSpeedup: number;
  /** Epoch time on `ranks` ranks, µs. */
  predictedEpochUs: number;
}

/** Steps after which a profile gives up waiting for two equal steps in a row (a job that never settles). */
const MAX_WARMUP_STEPS = 20;
/** Two steps agree when they differ by at most this fraction. */
const STEADY_RTOL = 1e-3;

/** Input and device time of one step run on its own: loaded, queued, and waited for. */
async function timeOneStep(comm: Comm, job: TrainingJob): Promise<{ inputUs: number; deviceUs: number }> {
  const t0 = comm.virtualTimeUs;
  const batch = await job.loadBatch(comm);
  const t1 = comm.virtualTimeUs;
  await job.launchStep(comm, batch);
  await job.synchronize(comm);
  return { inputUs: t1 - t0, deviceUs: comm.virtualTimeUs - t1 };
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= STEADY_RTOL * Math.max(Math.abs(a), Math.abs(b));

/**
 * Profiles one worker of `job` on this rank (the checks run it on one rank of
 * the virtual device): input and device time per step after warm-up, a
 * steady training loop's step and throughput, and the memory peak.
 */
export async function profileOneWorker(comm: Comm, job: TrainingJob): Promise<WorkerProfile> {
  const start = await memory.mark('profile start');
  // Warm-up: run steps alone until two in a row take the same time.
  let last = await timeOneStep(comm, job);
  for (let s = 1; s < MAX_WARMUP_STEPS; s++) {
    const now = await timeOneStep(comm, job);
    const steady = close(now.inputUs, last.inputUs) && close(now.deviceUs, last.deviceUs);
    last = now;
    if (steady) break;
  }
  // A steady loop: the time between two launches is a step, with the next batch loading while the device runs.
  await job.step(comm);
  const a = comm.virtualTimeUs;
  await job.step(comm);
  await job.step(comm);
  const stepUs = (comm.virtualTimeUs - a) / 2;
  await job.synchronize(comm);
  const end = await memory.mark('profile end');
  const peakBytes = Math.max(start?.peakBytes ?? 0, end?.peakBytes ?? 0);
  return { inputUs: last.inputUs, computeUs: last.deviceUs, stepUs, examplesPerSecond: (job.batchPerRank * 1e6) / stepUs, peakBytes };
}

/** The ring all-reduce of S bytes on N ranks: 2(N-1) messages of the largest chunk, ⌈S/(4N)⌉ float32 elements. */
function allReduceUs(job: TrainingJob, ranks: number): number {
  if (ranks === 1) return 0;
  const chunkBytes = Math.ceil(job.gradientBytes / 4 / ranks) * 4;
  return 2 * (ranks - 1) * (job.network.alphaUs + chunkBytes / job.network.bytesPerUs);
}

/**
 * Chooses the number of data-parallel ranks for `target` from one worker's
 * `profile`: for an epoch time, the fewest ranks whose epoch fits (the
 * fastest count if none does); for an efficiency (speedup / ranks), the most
 * ranks that keep at least `minEfficiency` (1 if no other does). Returns the
 * plan with its predicted speedup and epoch time.
 */
export function planRanks(job: TrainingJob, profile: WorkerProfile, target: ScalingTarget): ScalingPlan {
  const epochUs = (ranks: number): number => {
    const steps = Math.ceil(job.epochExamples / (ranks * job.batchPerRank));
    // The input overlaps the device's step; the all-reduce is part of it.
    return steps * Math.max(profile.inputUs, profile.computeUs + allReduceUs(job, ranks));
  };
  const one = epochUs(1);
  const plans = Array.from({ length: job.maxRanks }, (_, i): ScalingPlan => ({ ranks: i + 1, predictedSpeedup: one / epochUs(i + 1), predictedEpochUs: epochUs(i + 1) }));
  if (target.kind === 'epoch-time') {
    return plans.find((p) => p.predictedEpochUs <= target.maxEpochUs) ?? plans.reduce((a, b) => (b.predictedEpochUs < a.predictedEpochUs ? b : a));
  }
  let best = plans[0]!;
  for (const p of plans) if (p.predictedSpeedup / p.ranks >= target.minEfficiency) best = p;
  return best;
}
