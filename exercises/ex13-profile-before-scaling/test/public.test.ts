/**
 * Public tests of exercise 13. They run your profileOneWorker on one rank of
 * the virtual device (the inline backend, so breakpoints and stack traces
 * work), compare its figures with what the device measures for the same job,
 * then run the job on the number of ranks your planRanks chose and compare
 * the speedup it predicted with the one the device measures.
 *
 * The jobs are the checks' own (grader/checks/ex13-profile-before-scaling/job.ts):
 * read it to see how a step is made, not to read figures off it. A real
 * machine does not tell you them either.
 *
 *   pnpm test ex13        run them
 *   pnpm test:ui ex13     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { DeviceTrainingJob, JOB_DEVICE, type JobSpec } from '../../../grader/checks/ex13-profile-before-scaling/job.ts';
import { makeJob } from '../../../grader/checks/ex13-profile-before-scaling/data.ts';
import { planRanks, profileOneWorker, type ScalingTarget, type WorkerProfile } from '../src/profile-before-scaling.ts';

/** Runs `program` on `ranks` ranks of the job's device and returns rank 0's value. */
async function onDevice<T>(ranks: number, program: (comm: Comm) => Promise<T>): Promise<{ value: T; peakBytes: number }> {
  const r = await launch({ worldSize: ranks, program, device: JOB_DEVICE, timeoutMs: 60_000 });
  for (const o of r.ranks) if (o.status !== 'ok') throw o.error ?? new Error(`rank ${o.rank}: ${o.status}`);
  return { value: r.ranks[0]!.value as T, peakBytes: r.device!.ranks[0]!.memory.peakBytes };
}

/** The device's steady figures for the job: input and device time of a step run alone, a training loop's step, and the memory peak of one worker training it. */
async function deviceFigures(spec: JobSpec, ranks: number): Promise<{ inputUs: number; deviceUs: number; loopStepUs: number; peakBytes: number }> {
  const { value, peakBytes } = await onDevice(ranks, async (comm) => {
    const job = new DeviceTrainingJob(spec);
    let inputUs = 0;
    let deviceUs = 0;
    // Six steps: the last is past the warm-up of any of these jobs (at most three steps).
    for (let s = 0; s < 6; s++) {
      const t0 = comm.virtualTimeUs;
      const batch = await job.loadBatch(comm);
      const t1 = comm.virtualTimeUs;
      await job.launchStep(comm, batch);
      await job.synchronize(comm);
      [inputUs, deviceUs] = [t1 - t0, comm.virtualTimeUs - t1];
    }
    // A training loop: the time between two launches, the next batch loading while the device runs.
    await job.step(comm);
    const a = comm.virtualTimeUs;
    await job.step(comm);
    const loopStepUs = comm.virtualTimeUs - a;
    await job.synchronize(comm);
    return { inputUs, deviceUs, loopStepUs };
  });
  return { ...value, peakBytes };
}

/** Your profile of the job on one worker, and the device's memory peak of that launch. */
async function yourProfile(spec: JobSpec): Promise<{ profile: WorkerProfile; launchPeakBytes: number }> {
  const { value, peakBytes } = await onDevice(1, (comm) => profileOneWorker(comm, new DeviceTrainingJob(spec)));
  return { profile: value, launchPeakBytes: peakBytes };
}

const near = (actual: number, expected: number, rtol: number): boolean => Math.abs(actual - expected) <= rtol * Math.abs(expected);

const compute = makeJob('compute', 7, 4);
const communication = makeJob('communication', 8, 4);

describe('profileOneWorker', () => {
  it('measures a step of the compute-bound job as the device runs it after warm-up', async () => {
    const device = await deviceFigures(compute, 1);
    const { profile, launchPeakBytes } = await yourProfile(compute);
    const peakBytes = device.peakBytes;
    console.log(`device: input ${device.inputUs.toFixed(1)} µs, device ${device.deviceUs.toFixed(1)} µs, loop step ${device.loopStepUs.toFixed(1)} µs, memory peak ${peakBytes} B`);
    console.log(`yours:  input ${profile.inputUs.toFixed(1)} µs, device ${profile.computeUs.toFixed(1)} µs, loop step ${profile.stepUs.toFixed(1)} µs, memory peak ${profile.peakBytes} B`);
    expect(near(profile.inputUs, device.inputUs, 0.02), `input per step: device ${device.inputUs.toFixed(1)} µs, yours ${profile.inputUs.toFixed(1)} µs`).toBe(true);
    expect(near(profile.computeUs, device.deviceUs, 0.02), `device time per step: device ${device.deviceUs.toFixed(1)} µs, yours ${profile.computeUs.toFixed(1)} µs`).toBe(true);
    expect(near(profile.stepUs, device.loopStepUs, 0.02), `a training loop's step: device ${device.loopStepUs.toFixed(1)} µs, yours ${profile.stepUs.toFixed(1)} µs`).toBe(true);
    expect(near(profile.examplesPerSecond, (compute.batchPerRank * 1e6) / device.loopStepUs, 0.02), 'examples per second in that loop').toBe(true);
    // The device's peak is an upper bound between its collections, so two launches that allocate in different orders differ a little.
    expect(profile.peakBytes <= launchPeakBytes + 1024 && profile.peakBytes >= 0.9 * launchPeakBytes, `memory peak: the device's for your launch ${launchPeakBytes} B, yours ${profile.peakBytes} B`).toBe(true);
    expect(profile.peakBytes >= 0.75 * peakBytes, `memory peak: one worker training the job peaks at ${peakBytes} B, yours ${profile.peakBytes} B`).toBe(true);
  }, 60_000);
});

describe('planRanks', () => {
  const cases: [string, JobSpec, ScalingTarget][] = [
    ['the compute-bound job, an epoch within half of one worker\'s', compute, { kind: 'epoch-time', maxEpochUs: 0 }],
    ['the communication-bound job, an efficiency of at least 0.5', communication, { kind: 'efficiency', minEfficiency: 0.5 }],
  ];
  for (const [name, spec, target] of cases) {
    it(`predicts the speedup the device measures with the ranks it chose: ${name}`, async () => {
      const { profile } = await yourProfile(spec);
      const one = await deviceFigures(spec, 1);
      const epochOf = (ranks: number, stepUs: number): number => Math.ceil(spec.epochExamples / (ranks * spec.batchPerRank)) * stepUs;
      const t = target.kind === 'epoch-time' ? { ...target, maxEpochUs: epochOf(1, one.loopStepUs) / 2 } : target;
      const plan = planRanks(new DeviceTrainingJob(spec), profile, t);
      const atN = await deviceFigures(spec, plan.ranks);
      const measured = epochOf(1, one.loopStepUs) / epochOf(plan.ranks, atN.loopStepUs);
      console.log(`${spec.name}: chose ${plan.ranks} ranks, predicted speedup ${plan.predictedSpeedup.toFixed(2)}, the device measures ${measured.toFixed(2)}`);
      expect(near(plan.predictedSpeedup, measured, 0.03), `predicted speedup ${plan.predictedSpeedup.toFixed(3)} with ${plan.ranks} ranks, measured ${measured.toFixed(3)}`).toBe(true);
      expect(near(plan.predictedEpochUs, epochOf(plan.ranks, atN.loopStepUs), 0.03), 'predicted epoch time against the measured').toBe(true);
    }, 60_000);
  }
});
