/**
 * Rank programs of the ex04 hidden checks (run in the rank workers).
 */
import type { Comm } from '@dtlab/runtime';
import { trainWith } from '../../checks/ex04-ddp-from-scratch/programs.ts';
import type { TrainSpec, Trajectory } from '../../checks/ex04-ddp-from-scratch/data.ts';
import { buildToy } from './toy-model.ts';

/** Data-parallel training of the toy model with the submission's DataParallel (see trainWith). */
export function trainToy(comm: Comm, entry: string, spec: TrainSpec): Promise<Trajectory> {
  return trainWith(comm, entry, spec, buildToy);
}
