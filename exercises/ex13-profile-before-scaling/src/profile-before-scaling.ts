/**
 * Exercise 13: Profile one worker before adding more.
 *
 * Measure one worker of a training job on the virtual device, then choose how
 * many data-parallel ranks to use for a target, with the speedup they will
 * give. See README.md.
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

/**
 * Profiles one worker of `job` on this rank (the checks run it on one rank of
 * the virtual device): input and device time per step after warm-up, a
 * steady training loop's step and throughput, and the memory peak.
 */
export async function profileOneWorker(comm: Comm, job: TrainingJob): Promise<WorkerProfile> {
  // Time one step, piece by piece: the loop repeats the same step, so one is enough.
  const t0 = comm.virtualTimeUs;
  const batch = await job.loadBatch(comm);
  const t1 = comm.virtualTimeUs;
  await job.launchStep(comm, batch);
  const t2 = comm.virtualTimeUs;
  const mark = await memory.mark('after one step');
  const stepUs = t2 - t0;
  return { inputUs: t1 - t0, computeUs: t2 - t1, stepUs, examplesPerSecond: (job.batchPerRank * 1e6) / stepUs, peakBytes: mark?.peakBytes ?? 0 };
}

/**
 * Chooses the number of data-parallel ranks for `target` from one worker's
 * `profile`: for an epoch time, the fewest ranks whose epoch fits (the
 * fastest count if none does); for an efficiency (speedup / ranks), the most
 * ranks that keep at least `minEfficiency` (1 if no other does). Returns the
 * plan with its predicted speedup and epoch time.
 */
export function planRanks(job: TrainingJob, profile: WorkerProfile, target: ScalingTarget): ScalingPlan {
  // N workers do N times the work of one: the epoch takes 1/N of one worker's.
  const oneWorkerEpochUs = (job.epochExamples / job.batchPerRank) * profile.stepUs;
  const plan = (ranks: number): ScalingPlan => ({ ranks, predictedSpeedup: ranks, predictedEpochUs: oneWorkerEpochUs / ranks });
  if (target.kind === 'epoch-time') {
    for (let n = 1; n <= job.maxRanks; n++) if (plan(n).predictedEpochUs <= target.maxEpochUs) return plan(n);
  }
  return plan(job.maxRanks);
}
