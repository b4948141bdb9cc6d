/**
 * Rank programs of the ex05 hidden checks (run in the rank workers).
 */
import type { Comm } from '@dtlab/runtime';
import { timeWith, trainWith, type TimedTrajectory } from '../../checks/ex05-bucketed-overlap/programs.ts';
import type { BucketSpec, Trajectory } from '../../checks/ex05-bucketed-overlap/data.ts';
import { branchingBatch, buildBranching } from './branching-model.ts';

/** Data-parallel training of the branching model with the submission (see trainWith). */
export function trainBranching(comm: Comm, entry: string, spec: BucketSpec, fences: number[]): Promise<Trajectory> {
  return trainWith(comm, entry, spec, buildBranching, branchingBatch, fences);
}

/** The same, on the virtual device (not used by a check; kept for a Trainee's `timed`). */
export function timeBranching(comm: Comm, entry: string, spec: BucketSpec, fences: number[], key: string): Promise<TimedTrajectory> {
  return timeWith(comm, entry, spec, buildBranching, branchingBatch, fences, key);
}
