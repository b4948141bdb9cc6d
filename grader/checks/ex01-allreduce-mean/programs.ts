/**
 * Rank programs of the ex01 public checks: they run in the rank workers,
 * call the submission, and return what it left in the tensors.
 */
import type { Comm } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader/program';
import { rankTensors } from './data.ts';

type AllReduceMean = (comm: Comm, tensors: Tensor[]) => Promise<void>;

/** Builds this rank's tensors, runs the submission's allReduceMean on them, returns them. */
export async function meanOfRanks(comm: Comm, entry: string, seed: number, shapes: number[][]): Promise<Tensor[]> {
  const allReduceMean = await loadExport<AllReduceMean>(entry, 'allReduceMean');
  const tensors = rankTensors(seed, comm.rank, shapes);
  await allReduceMean(comm, tensors);
  return tensors;
}
