/**
 * Rank programs of the ex13 checks. `planOnOneWorker` runs the submission:
 * its profile of one worker on the job, then its plan for each target.
 * `measureJob` runs no submission code at all: it trains the job on N ranks
 * as a training loop would, and reads the virtual clock at each launch, so
 * that the checks measure what the plan predicted with the checker's own
 * code.
 */
import type { Comm } from '@dtlab/runtime';
import { loadExport } from '@dtlab/grader';
import { DeviceTrainingJob, type JobSpec } from './job.ts';
import type { ScalingTarget } from './plan.ts';

/** The submission's two functions, as the rank program calls them. */
type ProfileFn = (comm: Comm, job: DeviceTrainingJob) => Promise<unknown>;
type PlanFn = (job: DeviceTrainingJob, profile: unknown, target: ScalingTarget) => unknown;

/** What planOnOneWorker hands back (untrusted: the checks declare its shape and check every field). */
export interface PlanningResult {
  profile: unknown;
  plans: unknown[];
}

/** Profiles one worker with the submission's profileOneWorker, then asks its planRanks for each target. */
export async function planOnOneWorker(comm: Comm, entry: string, spec: JobSpec, targets: ScalingTarget[]): Promise<PlanningResult> {
  const profileOneWorker = await loadExport<ProfileFn>(entry, 'profileOneWorker');
  const planRanks = await loadExport<PlanFn>(entry, 'planRanks');
  const job = new DeviceTrainingJob(spec);
  const profile = await profileOneWorker(comm, job);
  // Plain copies, so that what the plans see and what is returned are the same numbers.
  const plans = targets.map((t) => planRanks(job, profile, { ...t }));
  return { profile, plans };
}

/** What measureJob reads on each rank: the virtual time at which each step was queued, and at the end. */
export interface Measured {
  launchUs: number[];
  endUs: number;
}

/**
 * Trains the job for `steps` steps on this rank as a training loop does
 * (`step` after `step`, then `synchronize`), reading the virtual clock each
 * time a step has been queued. In steady state, the difference between two
 * launches is the step time.
 */
export async function measureJob(comm: Comm, spec: JobSpec, steps: number): Promise<Measured> {
  const job = new DeviceTrainingJob(spec);
  const launchUs: number[] = [];
  for (let s = 0; s < steps; s++) {
    await job.step(comm);
    launchUs.push(comm.virtualTimeUs);
  }
  await job.synchronize(comm);
  return { launchUs, endUs: comm.virtualTimeUs };
}

/** One worker as the checker measures it: each step's parts run alone, then a training loop on the same job. */
export interface OneWorker {
  inputUs: number[];
  deviceUs: number[];
  loop: Measured;
}

/**
 * One worker's parts, measured by the checker: each of `steps` steps loaded
 * and then run to completion alone (synchronised), so that the input time and
 * the device time of each are separate; then three steps of a training loop
 * on the same job, past its warm-up by then, whose last two launches are a
 * steady step apart. The reference profile; the device's memory peak of
 * this launch is the reference memory baseline.
 */
export async function measureOneWorker(comm: Comm, spec: JobSpec, steps: number): Promise<OneWorker> {
  const job = new DeviceTrainingJob(spec);
  const inputUs: number[] = [];
  const deviceUs: number[] = [];
  for (let s = 0; s < steps; s++) {
    const t0 = comm.virtualTimeUs;
    const batch = await job.loadBatch(comm);
    const t1 = comm.virtualTimeUs;
    await job.launchStep(comm, batch);
    await job.synchronize(comm);
    inputUs.push(t1 - t0);
    deviceUs.push(comm.virtualTimeUs - t1);
  }
  const launchUs: number[] = [];
  for (let s = 0; s < 3; s++) {
    await job.step(comm);
    launchUs.push(comm.virtualTimeUs);
  }
  await job.synchronize(comm);
  return { inputUs, deviceUs, loop: { launchUs, endUs: comm.virtualTimeUs } };
}
